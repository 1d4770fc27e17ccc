%% labctl_peer runs one labctl benchmark kernel on the Erlang VM (BEAM processes and their
%% mailboxes) and reports how long its measured phase took, timed here with
%% erlang:monotonic_time(nanosecond) around that phase only, as our kernels time theirs.
%%
%% Protocol: erlang-peer.sh passes labctl's request {"kernel": ..., "params": {...}} as the one
%% plain argument; this prints one JSON line {"elapsed_ns", "messages", "answer", "metrics"} on
%% stdout and halts 0. Bad input: a one-line message on stderr, nothing on stdout, status 2. A
%% wrong answer (computed here and compared with what it must be, as our kernels do): status 1.
%% LABCTL_ERLANG_PEER_FAULT, for tests only: wrong_answer makes a kernel compute a wrong answer
%% (its own check refuses it); misreport prints a wrong answer after the check passed (labctl's
%% check must refuse it).
-module(labctl_peer).
-export([main/0]).

-define(NAME, "labctl-erlang-peer").

%% Each kernel's parameters: name -> {default, min, max} (an integer), {real, default, min, max},
%% {choice, default, values} or {boolean, default}, as labctl's schema has them.
kernels() ->
    #{<<"skynet">> => {#{<<"leaves">> => {1000000, 1, 100000000},
                         <<"branching">> => {10, 2, 1000000},
                         <<"threads">> => {1, 1, 1024}},
                       fun(P) -> skynet(param(<<"leaves">>, P), param(<<"branching">>, P)) end},
      <<"ping_pong">> => {#{<<"messages">> => {10000000, 2, 10000000000},
                            <<"latency_samples">> => {10000, 0, 10000000},
                            <<"threads">> => {1, 1, 1024}},
                          fun(P) -> ping_pong(param(<<"messages">>, P), param(<<"latency_samples">>, P)) end},
      <<"mailbox_n_to_1">> => {#{<<"senders">> => {20, 1, 10000},
                                 <<"messages_per_sender">> => {1000000, 1, 10000000000},
                                 <<"threads">> => {2, 1, 1024}},
                               fun(P) -> mailbox(param(<<"senders">>, P), param(<<"messages_per_sender">>, P)) end},
      <<"counting_actor">> => {#{<<"messages">> => {50000000, 1, 10000000000},
                                 <<"threads">> => {2, 1, 1024}},
                               fun(P) -> counting_actor(param(<<"messages">>, P)) end},
      <<"thread_ring">> => {#{<<"actors">> => {503, 1, 10000000},
                              <<"hops">> => {50000000, 0, 100000000000},
                              <<"threads">> => {2, 1, 1024}},
                            fun(P) -> thread_ring(param(<<"actors">>, P), 1, param(<<"hops">>, P)) end},
      <<"parallel_thread_ring">> => {#{<<"actors">> => {503, 1, 10000000},
                                       <<"tokens">> => {503, 1, 10000000},
                                       <<"hops">> => {50000000, 0, 100000000000},
                                       <<"threads">> => {2, 1, 1024}},
                                     fun(P) -> thread_ring(param(<<"actors">>, P), param(<<"tokens">>, P),
                                                           param(<<"hops">>, P)) end},
      <<"actor_creation">> => {#{<<"depth">> => {19, 0, 24},
                                 <<"threads">> => {2, 1, 1024}},
                               fun(P) -> actor_creation(param(<<"depth">>, P)) end},
      <<"service">> => {#{<<"requests">> => {100000, 1, 100000000},
                          <<"rate">> => {real, 100000.0, 1.0, 1.0e9},
                          <<"arrivals">> => {choice, <<"constant">>, [<<"constant">>, <<"poisson">>]},
                          <<"seed">> => {1, 0, 4611686018427387904},
                          <<"servers">> => {4, 1, 10000},
                          <<"routing">> => {choice, <<"round_robin">>, [<<"round_robin">>, <<"random">>, <<"hot">>]},
                          <<"work">> => {choice, <<"spin">>, [<<"spin">>]},
                          <<"work_ns">> => {0, 0, 1000000000},
                          <<"late_bound_us">> => {100, 1, 1000000},
                          <<"threads">> => {1, 1, 1024}},
                        fun service/1},
      <<"savina_pingpong">> => {#{<<"pings">> => {40000, 1, 1000000000}, <<"threads">> => {1, 1, 1024}},
                                fun(P) -> savina_pingpong(param(<<"pings">>, P)) end},
      <<"savina_count">> => {#{<<"increments">> => {1000000, 0, 10000000000}, <<"threads">> => {1, 1, 1024}},
                             fun(P) -> savina_count(param(<<"increments">>, P)) end},
      <<"savina_threadring">> => {#{<<"actors">> => {100, 1, 1000000}, <<"pings">> => {100000, 0, 10000000000},
                                    <<"threads">> => {1, 1, 1024}},
                                  fun(P) -> savina_threadring(param(<<"actors">>, P), param(<<"pings">>, P)) end},
      <<"savina_fjthrput">> => {#{<<"messages">> => {10000, 1, 1000000000}, <<"actors">> => {60, 1, 1000000},
                                  <<"threads">> => {1, 1, 1024}},
                                fun(P) -> savina_fjthrput(param(<<"messages">>, P), param(<<"actors">>, P)) end},
      <<"savina_fjcreate">> => {#{<<"workers">> => {40000, 1, 100000000}, <<"threads">> => {1, 1, 1024}},
                                fun(P) -> savina_fjcreate(param(<<"workers">>, P)) end},
      <<"savina_chameneos">> => {#{<<"creatures">> => {100, 2, 1000000}, <<"meetings">> => {200000, 0, 1000000000},
                                   <<"threads">> => {1, 1, 1024}},
                                 fun(P) -> savina_chameneos(param(<<"creatures">>, P), param(<<"meetings">>, P)) end},
      <<"savina_big">> => {#{<<"actors">> => {120, 1, 1000000}, <<"pings">> => {20000, 0, 1000000000},
                             <<"seed">> => {0, 0, 1000000000}, <<"threads">> => {1, 1, 1024}},
                           fun(P) -> savina_big(param(<<"actors">>, P), param(<<"pings">>, P), param(<<"seed">>, P)) end},
      <<"savina_logmap">> => {#{<<"terms">> => {25000, 1, 100000000}, <<"series">> => {10, 1, 100000},
                                <<"start_rate">> => {real, 3.46, 0.0, 4.0}, <<"increment">> => {real, 0.0025, 0.0, 1.0},
                                <<"threads">> => {1, 1, 1024}},
                              fun(P) -> savina_logmap(param(<<"terms">>, P), param(<<"series">>, P),
                                                      param(<<"start_rate">>, P), param(<<"increment">>, P)) end},
      <<"savina_banking">> => {#{<<"accounts">> => {1000, 10, 1000000}, <<"transactions">> => {50000, 0, 100000000},
                                 <<"seed">> => {123456, 0, 4294967295}, <<"threads">> => {1, 1, 1024}},
                               fun(P) -> savina_banking(param(<<"accounts">>, P), param(<<"transactions">>, P),
                                                        param(<<"seed">>, P)) end},
      <<"savina_cigsmok">> => {#{<<"rounds">> => {1000, 1, 100000000}, <<"smokers">> => {200, 1, 1000000},
                                 <<"seed">> => {0, 0, 4294967295}, <<"threads">> => {1, 1, 1024}},
                               fun(P) -> savina_cigsmok(param(<<"rounds">>, P), param(<<"smokers">>, P),
                                                        param(<<"seed">>, P)) end},
      <<"savina_bndbuffer">> => {#{<<"buffer_size">> => {50, 2, 10000000}, <<"producers">> => {40, 1, 100000},
                                   <<"consumers">> => {40, 1, 100000}, <<"items_per_producer">> => {1000, 0, 100000000},
                                   <<"produce_cost">> => {25, 0, 100000}, <<"consume_cost">> => {25, 0, 100000},
                                   <<"threads">> => {1, 1, 1024}},
                                 fun(P) -> savina_bndbuffer(param(<<"buffer_size">>, P), param(<<"producers">>, P),
                                                            param(<<"consumers">>, P), param(<<"items_per_producer">>, P),
                                                            param(<<"produce_cost">>, P), param(<<"consume_cost">>, P)) end},
      <<"savina_philosopher">> => {#{<<"philosophers">> => {20, 1, 1000000}, <<"rounds">> => {10000, 1, 1000000000},
                                     <<"threads">> => {1, 1, 1024}},
                                   fun(P) -> savina_philosopher(param(<<"philosophers">>, P), param(<<"rounds">>, P)) end},
      <<"savina_barber">> => {#{<<"haircuts">> => {5000, 1, 10000000}, <<"seats">> => {1000, 1, 10000000},
                                <<"production_rate">> => {1000, 1, 65536}, <<"haircut_rate">> => {1000, 1, 65536},
                                <<"seed">> => {74755, 0, 4294967295}, <<"threads">> => {1, 1, 1024}},
                              fun(P) -> savina_barber(param(<<"haircuts">>, P), param(<<"seats">>, P),
                                                      param(<<"production_rate">>, P), param(<<"haircut_rate">>, P),
                                                      param(<<"seed">>, P)) end},
      <<"savina_concdict">> => {#{<<"workers">> => {20, 1, 10000}, <<"messages_per_worker">> => {10000, 0, 1000000000},
                                  <<"write_percent">> => {10, 0, 100}, <<"keys">> => {524287, 1, 100000000},
                                  <<"seed">> => {1, 0, 4294967295}, <<"threads">> => {1, 1, 1024}},
                                fun(P) -> savina_concdict(param(<<"workers">>, P), param(<<"messages_per_worker">>, P),
                                                          param(<<"write_percent">>, P), param(<<"keys">>, P),
                                                          param(<<"seed">>, P)) end},
      <<"savina_concsll">> => {#{<<"workers">> => {20, 1, 10000}, <<"messages_per_worker">> => {8000, 0, 100000000},
                                 <<"write_percent">> => {10, 0, 100}, <<"size_percent">> => {1, 0, 100},
                                 <<"seed">> => {1, 0, 4294967295}, <<"threads">> => {1, 1, 1024}},
                               fun(P) -> savina_concsll(param(<<"workers">>, P), param(<<"messages_per_worker">>, P),
                                                        param(<<"write_percent">>, P), param(<<"size_percent">>, P),
                                                        param(<<"seed">>, P)) end},
      %% The chat of "Run, Actor, Run": labctl_chat.erl.
      <<"chat">> => {#{<<"clients">> => {1024, 2, 1000000}, <<"directories">> => {8, 1, 500000},
                       <<"turns">> => {32, 1, 1000000}, <<"iterations">> => {32, 1, 100000},
                       <<"compute">> => {55, 0, 100}, <<"post">> => {25, 0, 100}, <<"leave">> => {10, 0, 100},
                       <<"invite">> => {10, 0, 100}, <<"befriend">> => {10, 0, 100},
                       <<"seed">> => {42, 0, 1000000000}, <<"buffering">> => {boolean, true},
                       <<"compute_repeats">> => {10000, 0, 100000000}, <<"threads">> => {1, 1, 1024}},
                     fun(P) -> case labctl_chat:run(P) of
                                   {error, Why} -> fail("~s", [Why]);
                                   Ran -> Ran
                               end
                     end}}.

param(Name, Params) -> maps:get(Name, Params).

main() ->
    try run()
    catch Class:Reason:Stack -> fail(1, "crashed: ~p:~0p at ~0p", [Class, Reason, hd(Stack ++ [none])])
    end.

run() ->
    Fault = case os:getenv("LABCTL_ERLANG_PEER_FAULT") of
                false -> none;
                "wrong_answer" -> wrong_answer;
                "misreport" -> misreport;
                Other -> fail("LABCTL_ERLANG_PEER_FAULT=~s: not a fault (wrong_answer | misreport)", [Other])
            end,
    persistent_term:put(labctl_peer_fault, Fault),
    Request = case init:get_plain_arguments() of
                  [Text] -> unicode:characters_to_binary(Text);
                  _ -> fail("expected the request as the one plain argument (see erlang-peer.sh)", [])
              end,
    {Kernel, Params, Run} = parse(Request),
    Threads = param(<<"threads">>, Params),
    case erlang:system_info(schedulers_online) of
        Threads -> ok;
        Online -> fail("the VM has ~b schedulers online, the request asks for threads=~b "
                       "(start it with erl +S ~b:~b)", [Online, Threads, Threads, Threads])
    end,
    RssBefore = resident_kb(),
    %% A kernel may add keys of the reply's own (the protocol's agents_created, histogram).
    {Elapsed, Messages, Answer, Expected, Metrics, Extra} =
        case Run(Params) of
            {E, M, A, X, Ms} -> {E, M, A, X, Ms, #{}};
            {E, M, A, X, Ms, Keys} -> {E, M, A, X, Ms, Keys}
        end,
    %% Our kernels raise on a wrong answer and never return a timing: so does this.
    Answer =:= Expected orelse
        fail(1, "~s: wrong answer: got '~s', expected '~s'", [Kernel, Answer, Expected]),
    Printed = case Fault of misreport -> Answer ++ "0"; _ -> Answer end,
    io:put_chars([encode(Extra#{<<"elapsed_ns">> => Elapsed, <<"messages">> => Messages,
                                 <<"answer">> => list_to_binary(Printed), <<"metrics">> => Metrics,
                                 <<"rss_before_kb">> => RssBefore}), $\n]),
    halt(0).

%% The VM's resident set in KiB (VmRSS in /proc/self/status), before the kernel's set-up.
resident_kb() ->
    {ok, Status} = file:read_file("/proc/self/status"),
    [Line] = [L || L <- binary:split(Status, <<"\n">>, [global]), binary:match(L, <<"VmRSS:">>) =/= nomatch],
    [_, Kb | _] = binary:split(Line, [<<" ">>, <<"\t">>], [global, trim_all]),
    binary_to_integer(Kb).

fail(Format, Args) -> fail(2, Format, Args).

fail(Status, Format, Args) ->
    Line = lists:flatten(io_lib:format(Format, Args)),
    io:setopts(standard_error, [{encoding, unicode}]),
    io:put_chars(standard_error, [?NAME, ": ", [if C < 32 -> $\s; true -> C end || C <- Line], $\n]),
    halt(Status).

%% --- the request --------------------------------------------------------------------------

%% The kernel, its parameters (defaults filled in, each checked against its range) and its run.
parse(Request) ->
    Object = try json(Request)
             catch throw:{json, Why} -> fail("bad request: ~s", [Why])
             end,
    is_map(Object) orelse fail("bad request: not a JSON object", []),
    [fail("bad request: unknown field \"~ts\"", [K]) || K <- maps:keys(Object),
                                                       not lists:member(K, [<<"kernel">>, <<"params">>])],
    Kernel = maps:get(<<"kernel">>, Object, missing),
    {Schema, Run} = case maps:find(Kernel, kernels()) of
                        {ok, Found} -> Found;
                        error -> fail("unknown kernel ~ts", [show(Kernel)])
                    end,
    Given = maps:get(<<"params">>, Object, #{}),
    is_map(Given) orelse fail("bad request: params is not a JSON object", []),
    [fail("unknown param \"~ts\" for kernel ~s", [K, Kernel]) || K <- maps:keys(Given),
                                                                  not maps:is_key(K, Schema)],
    Params = maps:map(
               fun(Name, {real, Default, Min, Max}) ->
                       V = real(Name, maps:get(Name, Given, Default)),
                       (V >= Min andalso V =< Max) orelse
                           fail("param ~s=~g out of range [~g, ~g]", [Name, V, Min, Max]),
                       V;
                  (Name, {boolean, Default}) ->
                       V = maps:get(Name, Given, Default),
                       is_boolean(V) orelse fail("param ~s must be true or false, got ~ts", [Name, show(V)]),
                       V;
                  (Name, {choice, Default, Values}) ->
                       V = maps:get(Name, Given, Default),
                       lists:member(V, Values) orelse
                           fail("param ~s must be one of ~s, got ~ts", [Name, lists:join(", ", Values), show(V)]),
                       V;
                  (Name, {Default, Min, Max}) ->
                       V = maps:get(Name, Given, Default),
                       is_integer(V) orelse fail("param ~s must be an integer, got ~ts", [Name, show(V)]),
                       (V >= Min andalso V =< Max) orelse
                           fail("param ~s=~b out of range [~b, ~b]", [Name, V, Min, Max]),
                       V
               end, Schema),
    check(Kernel, Params),
    {binary_to_list(Kernel), Params, Run}.

%% A real parameter: a JSON integer or a number with a fraction or an exponent.
real(_, V) when is_integer(V) -> float(V);
real(_, V) when is_float(V) -> V;
real(Name, {number, Text} = V) ->
    %% Erlang's float syntax needs a fraction: 1e9 is read as 1.0e9.
    Mantissa = case binary:match(Text, <<".">>) of
                   nomatch -> binary:replace(Text, [<<"e">>, <<"E">>], <<".0e">>);
                   _ -> Text
               end,
    try binary_to_float(Mantissa)
    catch error:badarg -> fail("param ~s must be a number, got ~ts", [Name, show(V)])
    end;
real(Name, V) -> fail("param ~s must be a number, got ~ts", [Name, show(V)]).

%% What a range cannot say, refused as our kernels refuse it.
check(<<"ping_pong">>, #{<<"messages">> := M}) when M rem 2 =/= 0 ->
    fail("param messages=~b must be even", [M]);
check(<<"parallel_thread_ring">>, #{<<"hops">> := Hops, <<"tokens">> := Tokens}) when Tokens > 1 ->
    %% Theron's split gives the first tokens-1 ceil(hops/tokens) each; the last must not be short.
    (Hops + Tokens - 1) div Tokens * (Tokens - 1) =< Hops orelse
        fail("param hops=~b is too small to split over ~b tokens (each but the last makes "
             "ceil(hops/tokens)): use hops >= ~b or fewer tokens", [Hops, Tokens, Tokens * (Tokens - 1)]);
check(<<"savina_logmap">>, #{<<"series">> := Series, <<"start_rate">> := Rate, <<"increment">> := Increment}) ->
    Last = (Series - 1) * Increment,
    Last =< 1 orelse fail("param increment times (series - 1) must be at most 1 (series i starts at term "
                          "i*increment), got ~s", [float_to_list(Last, [short])]),
    Rate + Last =< 4 orelse fail("param start_rate + (series - 1) * increment must be at most 4, got ~s",
                                 [float_to_list(Rate + Last, [short])]);
check(<<"savina_bndbuffer">>, #{<<"buffer_size">> := Size, <<"producers">> := Producers,
                                <<"items_per_producer">> := Items}) ->
    Size > Producers orelse fail("param buffer_size (~b) must exceed producers (~b): the manager keeps room for "
                                 "an item from each producer in flight", [Size, Producers]),
    Producers * Items =< 1000000000 orelse
        fail("param producers * items_per_producer must be at most 1000000000 (each item is tracked)", []);
check(<<"savina_concdict">>, #{<<"keys">> := Keys, <<"workers">> := Workers}) when Keys < Workers ->
    fail("param keys (~b) must be at least workers (~b): each worker writes its own keys", [Keys, Workers]);
check(<<"savina_concsll">>, #{<<"write_percent">> := Write, <<"size_percent">> := Size}) when Write + Size > 100 ->
    fail("param write_percent (~b) plus size_percent (~b) must be at most 100", [Write, Size]);
check(<<"chat">>, Params) ->
    case labctl_chat:check(Params) of
        ok -> ok;
        {error, Why} -> fail("~s", [Why])
    end;
check(_, _) -> ok.

show(V) when is_binary(V) -> [$", V, $"];
show({number, Text}) -> Text;
show(V) -> io_lib:format("~p", [V]).

%% A small JSON reader: objects (maps with binary keys, a key at most once), arrays (lists),
%% strings (binaries), integers, other numbers as {number, Text}, true, false, null. Throws
%% {json, Why}.
json(Text) ->
    {Value, Rest} = value(ws(Text)),
    ws(Rest) =:= <<>> orelse throw({json, "trailing data after the JSON value"}),
    Value.

ws(<<C, Rest/binary>>) when C =:= $\s; C =:= $\t; C =:= $\n; C =:= $\r -> ws(Rest);
ws(Text) -> Text.

value(<<${, Rest/binary>>) -> object(ws(Rest), #{});
value(<<$[, Rest/binary>>) -> array(ws(Rest), []);
value(<<$", Rest/binary>>) -> string(Rest, []);
value(<<"true", Rest/binary>>) -> {true, Rest};
value(<<"false", Rest/binary>>) -> {false, Rest};
value(<<"null", Rest/binary>>) -> {null, Rest};
value(<<C, _/binary>> = Text) when C =:= $-; C >= $0, C =< $9 -> number(Text);
value(<<>>) -> throw({json, "unexpected end of input"});
value(_) -> throw({json, "unexpected character"}).

object(<<$}, Rest/binary>>, Map) when map_size(Map) =:= 0 -> {Map, Rest};
object(<<$", Text/binary>>, Map) ->
    {Key, AfterKey} = string(Text, []),
    maps:is_key(Key, Map) andalso throw({json, "a key given twice"}),
    <<$:, AfterColon/binary>> = expect(ws(AfterKey), $:),
    {Value, AfterValue} = value(ws(AfterColon)),
    case ws(AfterValue) of
        <<$,, More/binary>> -> object(ws(More), Map#{Key => Value});
        <<$}, More/binary>> -> {Map#{Key => Value}, More};
        _ -> throw({json, "expected , or } in an object"})
    end;
object(_, _) -> throw({json, "expected a string key in an object"}).

array(<<$], Rest/binary>>, []) -> {[], Rest};
array(Text, Items) ->
    {Value, AfterValue} = value(Text),
    case ws(AfterValue) of
        <<$,, More/binary>> -> array(ws(More), [Value | Items]);
        <<$], More/binary>> -> {lists:reverse([Value | Items]), More};
        _ -> throw({json, "expected , or ] in an array"})
    end.

expect(<<C, _/binary>> = Text, C) -> Text;
expect(_, C) -> throw({json, [$e, $x, $p, $e, $c, $t, $e, $d, $\s, C]}).

string(<<$", Rest/binary>>, Acc) ->
    case unicode:characters_to_binary(lists:reverse(Acc)) of
        Bin when is_binary(Bin) -> {Bin, Rest};
        _ -> throw({json, "a string that is not valid UTF-8"})
    end;
string(<<$\\, E, Rest/binary>>, Acc) when E =:= $"; E =:= $\\; E =:= $/ -> string(Rest, [E | Acc]);
string(<<$\\, $b, Rest/binary>>, Acc) -> string(Rest, [$\b | Acc]);
string(<<$\\, $f, Rest/binary>>, Acc) -> string(Rest, [$\f | Acc]);
string(<<$\\, $n, Rest/binary>>, Acc) -> string(Rest, [$\n | Acc]);
string(<<$\\, $r, Rest/binary>>, Acc) -> string(Rest, [$\r | Acc]);
string(<<$\\, $t, Rest/binary>>, Acc) -> string(Rest, [$\t | Acc]);
string(<<$\\, $u, Hex:4/binary, Rest/binary>>, Acc) ->
    Code = try binary_to_integer(Hex, 16) catch error:badarg -> throw({json, "a bad \\u escape"}) end,
    (Code >= 16#D800 andalso Code =< 16#DFFF) andalso throw({json, "a surrogate \\u escape"}),
    string(Rest, [Code | Acc]);
string(<<$\\, _/binary>>, _) -> throw({json, "a bad escape in a string"});
string(<<C, _/binary>>, _) when C < 32 -> throw({json, "a control character in a string"});
string(<<C/utf8, Rest/binary>>, Acc) -> string(Rest, [C | Acc]);
string(<<>>, _) -> throw({json, "an unterminated string"});
string(_, _) -> throw({json, "a string that is not valid UTF-8"}).

number(Text) ->
    {match, [Number]} = re:run(Text, "^-?[0-9.eE+-]*", [{capture, first, binary}]),
    Rest = binary:part(Text, byte_size(Number), byte_size(Text) - byte_size(Number)),
    case re:run(Number, "^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?$", [{capture, [2, 3], binary}]) of
        {match, [<<>>, <<>>]} -> {binary_to_integer(Number), Rest};
        {match, _} -> {{number, Number}, Rest};
        nomatch -> throw({json, "a malformed number"})
    end.

%% The reply: a map of binary keys to integers, floats, binaries or maps of those.
encode(Map) when is_map(Map) ->
    Fields = [[encode(K), $:, encode(V)] || {K, V} <- lists:sort(maps:to_list(Map))],
    [${, lists:join($,, Fields), $}];
encode(L) when is_list(L) -> [$[, lists:join($,, [encode(E) || E <- L]), $]];
encode(N) when is_integer(N) -> integer_to_list(N);
encode(F) when is_float(F) -> float_to_list(F, [short]);
encode(B) when is_binary(B) ->
    [$", [escape(C) || C <- unicode:characters_to_list(B)], $"].

escape($") -> "\\\"";
escape($\\) -> "\\\\";
escape(C) when C < 32 -> io_lib:format("\\u~4.16.0b", [C]);
escape(C) -> unicode:characters_to_binary([C]).

fault() -> persistent_term:get(labctl_peer_fault).

%% --- skynet -------------------------------------------------------------------------------
%% A tree of processes over leaves [0, leaves), each node having min(branching, count) children
%% (the first count rem children of them one leaf more), as our kernel splits it; every process
%% but the root sends one {report, Sum, Agents} to its parent. Measured: spawning the whole tree
%% and gathering its reports at the root (the Boost.Fiber page's skynet).

skynet(Leaves, Branching) ->
    Self = self(),
    Start = erlang:monotonic_time(nanosecond),
    spawn(fun() -> node(0, Leaves, Branching, Self) end),
    receive {report, Sum, Agents} -> ok end,
    Elapsed = erlang:monotonic_time(nanosecond) - Start,
    {Elapsed, Agents - 1, skynet_answer(Sum, Agents),
     skynet_answer(Leaves * (Leaves - 1) div 2, tree_agents(Leaves, Branching)),
     #{<<"agents">> => Agents, <<"ns_per_agent">> => Elapsed / Agents}, #{<<"agents_created">> => Agents}}.

skynet_answer(Sum, Agents) -> lists:flatten(io_lib:format("sum=~b agents=~b", [Sum, Agents])).

node(0, 1, _, Parent) ->  % the first leaf is the one a wrong_answer fault makes lie
    Parent ! {report, case fault() of wrong_answer -> 1; _ -> 0 end, 1};
node(First, 1, _, Parent) ->
    Parent ! {report, First, 1};
node(First, Count, Branching, Parent) ->
    Children = min(Branching, Count),
    spawn_children(self(), First, Count div Children, Count rem Children, Children, Branching),
    Parent ! gather(Children, 0, 1).

spawn_children(_, _, _, _, 0, _) -> ok;
spawn_children(Self, First, Base, Extra, Left, Branching) ->
    Size = if Extra > 0 -> Base + 1; true -> Base end,
    spawn(fun() -> node(First, Size, Branching, Self) end),
    spawn_children(Self, First + Size, Base, Extra - 1, Left - 1, Branching).

gather(0, Sum, Agents) -> {report, Sum, Agents};
gather(Left, Sum, Agents) ->
    receive {report, S, A} -> gather(Left - 1, Sum + S, Agents + A) end.

%% The agents of the tree, computed apart from it (memoised: a level has at most two sizes).
tree_agents(Leaves, Branching) -> element(1, tree_agents(Leaves, Branching, #{})).

tree_agents(1, _, Memo) -> {1, Memo};
tree_agents(Leaves, Branching, Memo) ->
    case Memo of
        #{Leaves := Known} -> {Known, Memo};
        _ ->
            Children = min(Branching, Leaves),
            Base = Leaves div Children,
            Extra = Leaves rem Children,  % children of Base + 1 leaves; the others have Base
            {Bigger, Memo1} = if Extra > 0 -> tree_agents(Base + 1, Branching, Memo); true -> {0, Memo} end,
            {Smaller, Memo2} = tree_agents(Base, Branching, Memo1),
            Total = 1 + Extra * Bigger + (Children - Extra) * Smaller,
            {Total, Memo2#{Leaves => Total}}
    end.

%% --- ping_pong ----------------------------------------------------------------------------
%% A pinger (this process) and a ponger process exchange messages/2 round trips, {ping, Seq}
%% answered by {pong, Seq}; each side checks that the sequence numbers arrive in order. As our
%% kernel, two phases: the throughput phase (elapsed_ns) has no clock read inside; then the
%% latency phase times latency_samples more round trips one by one for the percentiles.

ping_pong(Messages, Probes) ->
    RoundTrips = Messages div 2,
    Self = self(),
    Ponger = spawn(fun() -> ponger(RoundTrips, Probes, Self) end),
    Start = erlang:monotonic_time(nanosecond),
    OutOfOrder = pings(Ponger, 0, RoundTrips, 0),
    Elapsed = erlang:monotonic_time(nanosecond) - Start,
    ClockRead = if Probes > 0 -> clock_read_ns(); true -> 0 end,
    {Samples, ProbesOutOfOrder} = probes(Ponger, RoundTrips, RoundTrips + Probes, [], 0),
    receive {done, Pings, PingsOutOfOrder, Probed, ProbePingsOutOfOrder} -> ok end,
    Probed =:= Probes orelse fail(1, "ping_pong: the ponger answered ~b probes of ~b", [Probed, Probes]),
    Pongs = RoundTrips,  % the pinger waits for each pong: it counted every one
    AllOutOfOrder = OutOfOrder + PingsOutOfOrder + ProbesOutOfOrder + ProbePingsOutOfOrder,
    Sorted = list_to_tuple(lists:sort(Samples)),
    Latency = case tuple_size(Sorted) of
                  0 -> #{};
                  _ -> #{<<"round_trip_p50_ns">> => percentile(Sorted, 0.50),
                         <<"round_trip_p99_ns">> => percentile(Sorted, 0.99),
                         <<"round_trip_max_ns">> => percentile(Sorted, 1.0),
                         <<"clock_read_ns">> => ClockRead}
              end,
    %% A figure that was not measured is left out, never 0: the percentiles need probes.
    Metrics = Latency#{<<"round_trip_samples">> => tuple_size(Sorted),
                       <<"round_trip_mean_ns">> => Elapsed / RoundTrips},
    {Elapsed, Pings + Pongs, ping_pong_answer(Pings, Pongs, AllOutOfOrder),
     ping_pong_answer(RoundTrips, RoundTrips, 0), Metrics}.

ping_pong_answer(Pings, Pongs, OutOfOrder) ->
    lists:flatten(io_lib:format("pings=~b pongs=~b out_of_order=~b corrupt=0", [Pings, Pongs, OutOfOrder])).

%% The throughput phase: the out-of-order pongs.
pings(_, End, End, OutOfOrder) -> OutOfOrder;
pings(Ponger, Seq, End, OutOfOrder) ->
    Ponger ! {ping, Seq},
    receive {pong, Got} -> pings(Ponger, Seq + 1, End, OutOfOrder + if Got =:= Seq -> 0; true -> 1 end) end.

%% The latency phase: each round trip timed, and the out-of-order pongs.
probes(_, End, End, Samples, OutOfOrder) -> {Samples, OutOfOrder};
probes(Ponger, Seq, End, Samples, OutOfOrder) ->
    Sent = erlang:monotonic_time(nanosecond),
    Ponger ! {ping, Seq},
    receive {pong, Got} -> ok end,
    Sample = erlang:monotonic_time(nanosecond) - Sent,
    probes(Ponger, Seq + 1, End, [Sample | Samples], OutOfOrder + if Got =:= Seq -> 0; true -> 1 end).

%% Answers each ping with a pong of the same seq (the first one off by one under a wrong_answer
%% fault); counts each phase's pings and those out of order, and reports them when done.
ponger(RoundTrips, Probes, Pinger) ->
    Lie = case fault() of wrong_answer -> 1; _ -> 0 end,
    {Pings, OutOfOrder} = pongs(Pinger, 0, RoundTrips, 0, 0, Lie),
    {Probed, ProbesOutOfOrder} = pongs(Pinger, RoundTrips, RoundTrips + Probes, 0, 0, 0),
    Pinger ! {done, Pings, OutOfOrder, Probed, ProbesOutOfOrder}.

pongs(_, End, End, Received, OutOfOrder, _) -> {Received, OutOfOrder};
pongs(Pinger, Expected, End, Received, OutOfOrder, Lie) ->
    receive
        {ping, Seq} ->
            Pinger ! {pong, Seq + Lie},
            pongs(Pinger, Expected + 1, End, Received + 1,
                  OutOfOrder + if Seq =:= Expected -> 0; true -> 1 end, 0)
    end.

%% What one clock read costs here: each timed round trip includes about one.
clock_read_ns() ->
    Reads = 1000,
    First = erlang:monotonic_time(nanosecond),
    Last = lists:foldl(fun(_, _) -> erlang:monotonic_time(nanosecond) end, First, lists:seq(1, Reads)),
    (Last - First) / Reads.

%% sorted[min(trunc(P*(N-1)+0.5), N-1)], as our kernel picks a percentile.
percentile(Sorted, P) ->
    N = tuple_size(Sorted),
    element(min(trunc(P * (N - 1) + 0.5), N - 1) + 1, Sorted).

lie() -> case fault() of wrong_answer -> 1; _ -> 0 end.

%% --- mailbox_n_to_1 -----------------------------------------------------------------------
%% `senders` processes (Erlang has no threads: libcppa's Erlang program spawned 20) each send
%% {msg, Index, Seq} for Seq in 0..messages_per_sender-1 to this process, the receiver, which
%% counts them per sender and checks each sender's order. The senders are spawned before the
%% phase and released together at its start by a go message; it ends when the receiver has every
%% message.

mailbox(Senders, PerSender) ->
    Self = self(),
    Pids = [spawn(fun() -> receive go -> send_all(Self, I, lie_first(I), PerSender) end end)
            || I <- lists:seq(0, Senders - 1)],
    Start = erlang:monotonic_time(nanosecond),
    [Pid ! go || Pid <- Pids],
    {Received, OutOfOrder, Tally} = receive_all(Senders * PerSender, 0, 0, #{}),
    Elapsed = erlang:monotonic_time(nanosecond) - Start,
    Short = length([I || I <- lists:seq(0, Senders - 1), element(1, maps:get(I, Tally, {0, -1})) =/= PerSender]),
    {Elapsed, Received, mailbox_answer(Received, OutOfOrder, Short),
     mailbox_answer(Senders * PerSender, 0, 0), #{}}.

mailbox_answer(Received, OutOfOrder, Short) ->
    lists:flatten(io_lib:format("received=~b out_of_order=~b short_senders=~b", [Received, OutOfOrder, Short])).

%% Under a wrong_answer fault sender 0 numbers its first message 1.
lie_first(0) -> lie();
lie_first(_) -> 0.

send_all(Receiver, Index, Lie, PerSender) ->
    Receiver ! {msg, Index, Lie},
    send_rest(Receiver, Index, 1, PerSender).

send_rest(_, _, End, End) -> ok;
send_rest(Receiver, Index, Seq, End) ->
    Receiver ! {msg, Index, Seq},
    send_rest(Receiver, Index, Seq + 1, End).

%% Sender => {count, last seq}.
receive_all(0, Received, OutOfOrder, Tally) -> {Received, OutOfOrder, Tally};
receive_all(Left, Received, OutOfOrder, Tally) ->
    receive
        {msg, Index, Seq} ->
            {Count, Last} = maps:get(Index, Tally, {0, -1}),
            receive_all(Left - 1, Received + 1, OutOfOrder + if Seq =:= Last + 1 -> 0; true -> 1 end,
                        Tally#{Index => {Count + 1, Seq}})
    end.

%% --- counting_actor -----------------------------------------------------------------------
%% The Theron 3.03 page's CountingActor, the benchmark it sets beside Erlang's 1.2 s for 3 million
%% messages: this process (the kernel's own, as ours sends from its own thread outside the
%% runtime) sends the numbers 1..messages to one counting process, which counts and sums them.
%% As our counter, it knows how many are coming: on the last it reads the clock and sends its
%% count back, and no request for the count is sent (ours has none, and labctl holds the messages
%% to exactly `messages`). The counter is spawned and has said it is ready before the phase (ours
%% waits for its start); the phase runs from the first send to the count of the last, read where
%% the counter counted it, as our phase ends where the counter sets its completion: this
%% process's wake-up is not in it. The numbers are sent bare: a small integer is a message
%% without heap data, as our Add is a plain uint64 (a tuple would be copied into the flooded
%% queue, a heap fragment per message).

counting_actor(Messages) ->
    Self = self(),
    Counter = spawn(fun() -> Self ! {ready, self()}, count(Self, Messages, 0, 0) end),
    receive {ready, Counter} -> ok end,
    Start = erlang:monotonic_time(nanosecond),
    Counter ! 1 + lie(),  % under a wrong_answer fault the first number is 2
    send_numbers(Counter, 2, Messages),
    receive {counted, End, Received, Sum} -> ok end,
    Elapsed = End - Start,
    {Elapsed, Received, counting_answer(Received, Sum),
     counting_answer(Messages, Messages * (Messages + 1) div 2), #{}}.

%% Our counter sums in a uint64 that wraps past 2^64 (messages > 6e9); this one's sum is exact,
%% so the answer shows it modulo 2^64, the same number.
counting_answer(Received, Sum) ->
    lists:flatten(io_lib:format("received=~b sum=~b", [Received, Sum band (1 bsl 64 - 1)])).

send_numbers(_, N, Last) when N > Last -> ok;
send_numbers(Counter, N, Last) ->
    Counter ! N,
    send_numbers(Counter, N + 1, Last).

count(Sender, Messages, Received, Sum) ->
    receive
        N ->
            case Received + 1 of
                Messages -> Sender ! {counted, erlang:monotonic_time(nanosecond), Messages, Sum + N};
                Counted -> count(Sender, Messages, Counted, Sum + N)
            end
    end.

%% --- thread_ring and parallel_thread_ring -------------------------------------------------
%% `actors` processes in a ring and `tokens` tokens (thread_ring: one), token J injected at
%% process J rem actors carrying a countdown of its share of `hops`, split as Theron's
%% ParallelThreadRing splits them: each of the first tokens-1 makes ceil(hops/tokens) hops, the
%% last the rest. Each process forwards a token to the next with the countdown decremented,
%% until it reaches 0, when that process reports {ended, Id, Index, HopsMade} to this process,
%% the collector, which checks each end against the plan as it comes (as our collector does,
%% inside the phase). The ring is spawned and linked, and every process has said so, before the
%% phase (ours waits for every agent's start); the phase runs from the first injection to the
%% last end report. Each process counts its receipts, asked for after the phase, against the
%% visits the arithmetic predicts. One kernel for both, as ours: the ring, its checks and its
%% arithmetic are the same.

thread_ring(Actors, Tokens, Hops) ->
    Self = self(),
    Ring = list_to_tuple([spawn(fun() -> ring_start(Self, I) end) || I <- lists:seq(0, Actors - 1)]),
    [element(I + 1, Ring) ! {next, element((I + 1) rem Actors + 1, Ring)} || I <- lists:seq(0, Actors - 1)],
    [receive linked -> ok end || _ <- lists:seq(1, Actors)],
    Each = (Hops + Tokens - 1) div Tokens,
    Plan = {Each, Hops - Each * (Tokens - 1)},  % the hops of the first tokens-1, of the last
    Seen = atomics:new(Tokens, [{signed, false}]),
    Start = erlang:monotonic_time(nanosecond),
    inject(Ring, Actors, Tokens, Plan, 0),
    {Ended, WrongEnd, WrongHops, Repeated} = collect(Tokens, Actors, Tokens, Plan, Seen, {0, 0, 0, 0}),
    Elapsed = erlang:monotonic_time(nanosecond) - Start,
    [element(I + 1, Ring) ! {count, Self} || I <- lists:seq(0, Actors - 1)],
    Counts = lists:sort([receive {visits, I, Visits} -> {I, Visits} end || _ <- lists:seq(1, Actors)]),
    Received = lists:sum([Visits || {_, Visits} <- Counts]),
    Uneven = uneven(Counts, visits(Actors, Tokens, Plan)),
    Stray = flush_ends(0),  % an end reported after every token had ended: one ended twice
    Made = Received - min(Received, Tokens),  % every receipt but each token's injection is a hop
    Metrics = if Made > 0 -> #{<<"ns_per_hop">> => Elapsed / Made}; true -> #{} end,
    {Elapsed, Received + Ended, ring_answer(Ended, WrongEnd, WrongHops, Repeated + Stray, Uneven),
     ring_answer(Tokens, 0, 0, 0, 0), Metrics}.

ring_answer(Ended, WrongEnd, WrongHops, Repeated, Uneven) ->
    lists:flatten(io_lib:format("tokens_ended=~b wrong_end=~b wrong_hops=~b repeated=~b uneven_agents=~b",
                                [Ended, WrongEnd, WrongHops, Repeated, Uneven])).

planned_hops(J, Tokens, {Each, Last}) -> if J < Tokens - 1 -> Each; true -> Last end.

%% Under a wrong_answer fault token 0 makes one hop more than planned.
inject(_, _, Tokens, _, Tokens) -> ok;
inject(Ring, Actors, Tokens, Plan, J) ->
    Lie = if J =:= 0 -> lie(); true -> 0 end,
    element(J rem Actors + 1, Ring) ! {token, J, planned_hops(J, Tokens, Plan) + Lie, 0},
    inject(Ring, Actors, Tokens, Plan, J + 1).

%% Counts `tokens` end reports (repeats included, as ours), each checked against the plan.
collect(0, _, _, _, _, Outcome) -> Outcome;
collect(Left, Actors, Tokens, Plan, Seen, {Ended, WrongEnd, WrongHops, Repeated}) ->
    receive
        {ended, Id, At, Made} ->
            Planned = planned_hops(Id, Tokens, Plan),
            collect(Left - 1, Actors, Tokens, Plan, Seen,
                    {Ended + 1, WrongEnd + if At =:= (Id rem Actors + Planned) rem Actors -> 0; true -> 1 end,
                     WrongHops + if Made =:= Planned -> 0; true -> 1 end,
                     Repeated + atomics:exchange(Seen, Id + 1, 1)})
    end.

flush_ends(Stray) -> receive {ended, _, _, _} -> flush_ends(Stray + 1) after 0 -> Stray end.

%% The visits each process must count, as {Base, Diff}: token J stops at stops = hops + 1
%% processes from J rem actors on, so every process gets stops div actors of them and the next
%% stops rem actors from its start one more. Those runs are marked in a difference array (+1
%% where one begins, -1 past its end), so process I must count Base plus the sum of Diff[0..I]:
%% O(actors + tokens), where adding each token's visits to each process would be their product.
visits(Actors, Tokens, Plan) ->
    Diff = atomics:new(Actors + 1, [{signed, true}]),  % index I + 1 for process I; Actors + 1: past the end
    Mark = fun(From, To) -> atomics:add(Diff, From + 1, 1), atomics:add(Diff, To + 1, -1) end,
    {Each, Last} = Plan,
    Base = (Tokens - 1) * ((Each + 1) div Actors) + (Last + 1) div Actors,
    mark_runs(Actors, Tokens, Plan, Mark, 0),
    {Base, Diff}.

mark_runs(_, Tokens, _, _, Tokens) -> ok;
mark_runs(Actors, Tokens, Plan, Mark, J) ->
    First = J rem Actors,
    Past = First + (planned_hops(J, Tokens, Plan) + 1) rem Actors,
    if Past =< Actors -> Mark(First, Past);
       true -> Mark(First, Actors), Mark(0, Past - Actors)
    end,
    mark_runs(Actors, Tokens, Plan, Mark, J + 1).

%% The processes (Counts: {Index, Visits} in index order) that counted other than they must.
uneven(Counts, {Base, Diff}) -> uneven(Counts, Base, Diff, 0, 0).

uneven([], _, _, _, Uneven) -> Uneven;
uneven([{I, Visits} | Rest], Base, Diff, Level, Uneven) ->
    Here = Level + atomics:get(Diff, I + 1),
    uneven(Rest, Base, Diff, Here, Uneven + if Visits =:= Base + Here -> 0; true -> 1 end).

ring_start(Collector, Index) ->
    receive {next, Next} -> Collector ! linked, ring(Collector, Index, Next, 0) end.

ring(Collector, Index, Next, Visits) ->
    receive
        {token, Id, 0, Made} ->
            Collector ! {ended, Id, Index, Made},
            ring(Collector, Index, Next, Visits + 1);
        {token, Id, Countdown, Made} ->
            Next ! {token, Id, Countdown - 1, Made + 1},
            ring(Collector, Index, Next, Visits + 1);
        {count, Asker} ->
            Asker ! {visits, Index, Visits}
    end.

%% --- actor_creation -----------------------------------------------------------------------
%% libcppa's {spread, N}: the root is sent {spread, depth}; a process sent {spread, N} with N > 0
%% spawns two children and sends each {spread, N-1}; a leaf ({spread, 0}) sends {count, 1, 1} to
%% its parent; an inner process sums its children's leaves and processes and sends the sum up,
%% then ends (the study's actors quit). Measured: from the root's spawn to its count.

actor_creation(Depth) ->
    Self = self(),
    Start = erlang:monotonic_time(nanosecond),
    Root = spawn(fun() -> spreader(Self) end),
    Root ! {spread, Depth},
    receive {count, Leaves, Agents} -> ok end,
    Elapsed = erlang:monotonic_time(nanosecond) - Start,
    Answer = fun(L, A) -> lists:flatten(io_lib:format("leaves=~b agents=~b", [L, A])) end,
    %% Every process handled its {spread, N} and every one but the root sent a count.
    {Elapsed, 2 * Agents - 1, Answer(Leaves, Agents), Answer(1 bsl Depth, (2 bsl Depth) - 1),
     #{<<"agents">> => Agents, <<"ns_per_agent">> => Elapsed / Agents}}.

spreader(Parent) ->
    receive
        {spread, 0} -> Parent ! {count, 1 + lie_leaf(), 1};
        {spread, N} ->
            Self = self(),
            spawn(fun() -> spreader(Self) end) ! {spread, N - 1},
            spawn(fun() -> spreader(Self) end) ! {spread, N - 1},
            receive {count, L1, A1} -> ok end,
            receive {count, L2, A2} -> ok end,
            Parent ! {count, L1 + L2, A1 + A2 + 1}
    end.

%% Under a wrong_answer fault every leaf counts itself twice (a leaf has no index to single out).
lie_leaf() -> lie().

%% --- service ------------------------------------------------------------------------------
%% A service under an open-loop load, as our kernel (native/kernels/service). The generator (this
%% process) sends `requests` requests on a fixed schedule of `rate` per second to `servers`
%% server processes, each request costing its server work_ns of spin; every answer goes to one
%% collector process, which records its latency from when the request was DUE (not when it was
%% sent) into a histogram of ours (2 significant digits, in a `counters` array: no allocation
%% per record). A latency percentile is left out where more of the sends were later than
%% late_bound_us than lie above it (p99: 1%; the max: any), as ours (service.hpp, kPercentiles);
%% more than half late and the generator fell behind: no percentile at all. Differences from ours: the Poisson gaps and
%% the random routing come from rand's exsss seeded with `seed` (another sequence than our
%% mt19937_64); the generator sleeps (receive after, whole milliseconds) only until 2 ms before a
%% send, then spins; work=sleep is not taken (a BEAM timer sleeps whole milliseconds); the
%% collector's count per id is a counter of 8 bytes, not a byte.

-define(BEHIND_LATE_SHARE, 0.5).
-define(HIGHEST, (1 bsl 40)).

service(P) ->
    Requests = param(<<"requests">>, P),
    Servers = param(<<"servers">>, P),
    WorkNs = param(<<"work_ns">>, P),
    LateBound = param(<<"late_bound_us">>, P) * 1000,
    Schedule = service_schedule(Requests, param(<<"rate">>, P), param(<<"arrivals">>, P),
                                param(<<"seed">>, P), Servers, param(<<"routing">>, P)),
    Self = self(),
    Start = erlang:monotonic_time(nanosecond),
    Collector = spawn(fun() -> collector(Requests, Self) end),
    ServerPids = list_to_tuple([spawn(fun() -> server(WorkNs, Collector) end) || _ <- lists:seq(1, Servers)]),
    Origin = erlang:monotonic_time(nanosecond),
    Lag = histogram_new(),
    Late = generate(Schedule, 0, Origin, ServerPids, LateBound, Lag, 0),
    LastSend = erlang:monotonic_time(nanosecond),
    receive {collected, Answer, Latency, LastAnswer} -> ok end,
    Elapsed = erlang:monotonic_time(nanosecond) - Start,
    [S ! stop || S <- tuple_to_list(ServerPids)],
    LateShare = Late / Requests,
    Behind = LateShare > ?BEHIND_LATE_SHARE,
    %% Percentile Q stands where the late sends are at most the share above it (PerMille
    %% thousandths, counted exactly).
    Stands = fun(PerMille) -> not Behind andalso Late * 1000 =< PerMille * Requests end,
    Percentiles = maps:from_list(
                    [{Name, case Q of 100 -> histogram_max(Latency); _ -> histogram_percentile(Latency, Q) end}
                     || {Name, Q, PerMille} <- [{<<"latency_p50_ns">>, 50, 500}, {<<"latency_p90_ns">>, 90, 100},
                                                {<<"latency_p99_ns">>, 99, 10}, {<<"latency_p999_ns">>, 99.9, 1},
                                                {<<"latency_max_ns">>, 100, 0}],
                        Stands(PerMille)]),
    SendSpan = LastSend - Origin,
    AnswerSpan = LastAnswer - Origin,
    Rates = maps:merge(
              if Requests > 1, SendSpan > 0 -> #{<<"sent_per_s">> => (Requests - 1) * 1.0e9 / SendSpan};
                 true -> #{} end,
              if AnswerSpan > 0 -> #{<<"answered_per_s">> => Requests * 1.0e9 / AnswerSpan};
                 true -> #{} end),
    Metrics = maps:merge(maps:merge(Percentiles, Rates),
                         #{<<"generator_behind">> => if Behind -> 1; true -> 0 end,
                           <<"generator_lag_p99_ns">> => histogram_percentile(Lag, 99),
                           <<"generator_lag_max_ns">> => max(histogram_max(Lag), 1),
                           <<"generator_late_share">> => LateShare,
                           <<"histogram_record_ns">> => histogram_record_ns()}),
    {max(Elapsed, 1), 2 * Requests, Answer, service_answer(Requests, Requests, 0, 0, 0, Requests * (Requests - 1) div 2),
     Metrics, #{<<"histogram">> => histogram_buckets(Latency)}}.

service_answer(Requests, Answered, Repeated, Missing, Unknown, IdSum) ->
    lists:flatten(io_lib:format("requests=~b answered=~b repeated=~b missing=~b unknown=~b id_sum=~b",
                                [Requests, Answered, Repeated, Missing, Unknown, IdSum])).

%% The plan, made before the phase, as our make_schedule: a binary of 12 bytes a request (its
%% due time, ns after the generator's start, and its server, 1-based), as ours.
service_schedule(Requests, Rate, Arrivals, Seed, Servers, Routing) ->
    ArrivalState = rand:seed_s(exsss, Seed),
    RoutingState = rand:seed_s(exsss, Seed bxor 16#1e3779b97f4a7c15),
    service_schedule(0, Requests, Rate, Arrivals, Servers, Routing, 0.0, ArrivalState, RoutingState, <<>>).

service_schedule(Requests, Requests, _, _, _, _, _, _, _, Acc) -> Acc;
service_schedule(I, Requests, Rate, Arrivals, Servers, Routing, At0, A0, R0, Acc) ->
    {At, A} = case Arrivals of
                  <<"constant">> -> {I / Rate, A0};
                  <<"poisson">> when I =:= 0 -> {At0, A0};
                  <<"poisson">> -> {Gap, A1} = rand:uniform_real_s(A0), {At0 - math:log(Gap) / Rate, A1}
              end,
    {Server, R} = case Routing of
                      <<"round_robin">> -> {I rem Servers + 1, R0};
                      <<"random">> -> rand:uniform_s(Servers, R0);
                      <<"hot">> -> {1, R0}
                  end,
    service_schedule(I + 1, Requests, Rate, Arrivals, Servers, Routing, At, A, R,
                     <<Acc/binary, (trunc(At * 1.0e9)):64, Server:32>>).

%% The generator: waits for each due time, records how late it went on, sends. Returns the
%% count of late sends.
generate(<<>>, _, _, _, _, _, Late) -> Late;
generate(<<DueNs:64, Server:32, Rest/binary>>, Id, Origin, Servers, LateBound, Lag, Late) ->
    Due = Origin + DueNs,
    LagNs = wait_until(Due) - Due,
    histogram_record(Lag, max(LagNs, 1)),
    element(Server, Servers) ! {request, Id, Due},
    generate(Rest, Id + 1, Origin, Servers, LateBound, Lag, if LagNs > LateBound -> Late + 1; true -> Late end).

wait_until(Due) ->
    Now = erlang:monotonic_time(nanosecond),
    Far = (Due - Now) div 1000000 - 2,
    if Far > 0 -> receive after Far -> ok end;
       true -> ok
    end,
    spin_until(Due).

spin_until(Until) ->
    case erlang:monotonic_time(nanosecond) of
        Now when Now >= Until -> Now;
        _ -> spin_until(Until)
    end.

server(WorkNs, Collector) ->
    receive
        {request, Id, Due} ->
            WorkNs > 0 andalso spin_until(erlang:monotonic_time(nanosecond) + WorkNs),
            Collector ! {reply, Id, Due},
            server(WorkNs, Collector);
        stop -> ok
    end.

%% Counts each answer by id and records its latency from its due time; hands the answer, the
%% histogram and the last answer's time to the generator when every request has one.
collector(Requests, Generator) ->
    Seen = counters:new(Requests, []),
    Latency = histogram_new(),
    {Unknown, IdSum, Last} = collect(0, Requests, Seen, Latency, 0, 0, 0),
    {Missing, Repeated} = lists:foldl(fun(I, {M, R}) ->
                                              case counters:get(Seen, I) of
                                                  0 -> {M + 1, R};
                                                  T -> {M, R + T - 1}
                                              end
                                      end, {0, 0}, lists:seq(1, Requests)),
    Id0Fault = case fault() of wrong_answer -> 1; _ -> 0 end,
    Generator ! {collected, service_answer(Requests, Requests, Repeated, Missing, Unknown, IdSum + Id0Fault),
                 Latency, Last}.

collect(Requests, Requests, _, _, Unknown, IdSum, Last) -> {Unknown, IdSum, Last};
collect(Answered, Requests, Seen, Latency, Unknown, IdSum, _) ->
    receive
        {reply, Id, Due} ->
            Now = erlang:monotonic_time(nanosecond),
            histogram_record(Latency, Now - Due),
            if Id >= 0, Id < Requests ->
                    counters:add(Seen, Id + 1, 1),
                    collect(Answered + 1, Requests, Seen, Latency, Unknown, IdSum + Id, Now);
               true ->
                    collect(Answered + 1, Requests, Seen, Latency, Unknown + 1, IdSum, Now)
            end
    end.

%% Our Histogram at 2 significant digits: 256 sub-buckets (magnitude 8), half of them 128
%% (magnitude 7), mask 255; values 0 to 2^40, power-of-two buckets. The counts are a `counters`
%% array (index + 1), the last two slots the total and the exact max: record allocates nothing.
-define(HALF_MAGNITUDE, 7).
-define(HALF_COUNT, 128).
-define(MASK, 255).
-define(BUCKETS, 34).  % buckets until 256 bsl (B - 1) > 2^40
-define(SLOTS, ((?BUCKETS + 1) * ?HALF_COUNT)).

histogram_new() -> counters:new(?SLOTS + 2, []).

histogram_record(H, Value) ->
    counters:get(H, ?SLOTS + 2) < Value andalso counters:put(H, ?SLOTS + 2, Value),
    counters:add(H, index_of(min(max(Value, 0), ?HIGHEST)) + 1, 1),
    counters:add(H, ?SLOTS + 1, 1).

histogram_max(H) -> counters:get(H, ?SLOTS + 2).

%% Each bucket that counted a value, [its lowest value, its count], lowest first (the sample's
%% histogram, as ours).
histogram_buckets(H) ->
    [[value_of(I), C] || I <- lists:seq(0, ?SLOTS - 1), (C = counters:get(H, I + 1)) > 0].

%% The bucket of V: its bit length past the sub-buckets' (64 - clz(V bor mask) - 8).
bucket_of(V) -> bit_length((V bor ?MASK) bsr (?HALF_MAGNITUDE + 1)).

%% The bits of a non-negative integer below 2^64, by halving the range (a few guards, no loop).
bit_length(X) when X >= 1 bsl 32 -> 32 + bit_length(X bsr 32);
bit_length(X) when X >= 1 bsl 16 -> 16 + bit_length(X bsr 16);
bit_length(X) when X >= 1 bsl 8 -> 8 + bit_length(X bsr 8);
bit_length(X) when X >= 1 bsl 4 -> 4 + bit_length(X bsr 4);
bit_length(X) when X >= 1 bsl 2 -> 2 + bit_length(X bsr 2);
bit_length(X) when X >= 2 -> 2;
bit_length(X) -> X.

index_of(V) ->
    Bucket = bucket_of(V),
    ((Bucket + 1) bsl ?HALF_MAGNITUDE) + (V bsr Bucket) - ?HALF_COUNT.

value_of(Index) ->
    Bucket = (Index bsr ?HALF_MAGNITUDE) - 1,
    Sub = (Index band (?HALF_COUNT - 1)) + ?HALF_COUNT,
    if Bucket < 0 -> Sub - ?HALF_COUNT;
       true -> Sub bsl Bucket
    end.

%% As our value_at_percentile: the highest value equivalent to the ceil(p/100*count)-th smallest
%% (at least the first), at most the exact max; 0 when empty.
histogram_percentile(H, P) ->
    case counters:get(H, ?SLOTS + 1) of
        0 -> 0;
        Total ->
            Rank = max(1, ceil(P / 100 * Total)),
            percentile_at(H, 0, Rank, 0)
    end.

percentile_at(H, ?SLOTS, _, _) -> histogram_max(H);
percentile_at(H, Index, Rank, Seen0) ->
    Seen = Seen0 + counters:get(H, Index + 1),
    if Seen >= Rank ->
            Lowest = value_of(Index),
            min(Lowest + (1 bsl bucket_of(Lowest)) - 1, histogram_max(H));
       true -> percentile_at(H, Index + 1, Rank, Seen)
    end.

%% The mean cost of one record, measured in the run as ours.
histogram_record_ns() ->
    Records = 200000,
    Scratch = histogram_new(),
    Start = erlang:monotonic_time(nanosecond),
    record_spread(Scratch, 0, Records),
    Elapsed = erlang:monotonic_time(nanosecond) - Start,
    counters:get(Scratch, ?SLOTS + 1) =:= Records orelse fail(1, "service: the histogram lost a record", []),
    Elapsed / Records.

record_spread(_, Records, Records) -> ok;
record_spread(H, I, Records) ->
    histogram_record(H, (I * 7919) rem 5000000 + 1),
    record_spread(H, I + 1, Records).

%% --- Savina's micro benchmarks ------------------------------------------------------------
%% Savina's actors as processes, each its own mailbox, receiving by pattern; the messages are
%% Savina's, the counts and answers our kernels' (native/kernels/savina/<name>.hpp), computed here
%% and checked as every kernel here is. Each process counts what it handled and reports its
%% tally to this process when it exits (a message more, not counted, as ours read their agents'
%% tallies after the run). The phase runs from the first process spawned to the clock read where
%% the last message is handled, as ours. Differences from Savina, beyond ours (each kernel's
%% description): the VM and its schedulers exist before the clock, where Savina's runIteration
%% makes its actor system; Erlang's mailboxes are unbounded, as Akka's; one sample per run.

%% savina_pingpong: ping sends a SendPing, pong answers SendPong, ping sends itself a Ping
%% before the next, until `pings`; then Stop, and pong's Stop ends the run.
savina_pingpong(Pings) ->
    Self = self(),
    Start = erlang:monotonic_time(nanosecond),
    Pong = spawn(fun() -> sp_pong(Self, 0) end),
    Ping = spawn(fun() -> sp_ping(Self, Pong, Pings, {0, 0, 0}) end),
    Ping ! start,
    receive {pong_done, End, SendPing, Stop} -> ok end,
    receive {ping_done, Starts, PingsSelf, SendPong, Left} -> ok end,
    Tally = {Starts, PingsSelf + lie(), SendPing, SendPong, Stop, Left},
    {End - Start, Starts + PingsSelf + SendPing + SendPong + Stop, sp_answer(Tally),
     sp_answer({1, Pings - 1, Pings, Pings, 1, 0}), #{}}.

sp_answer({Start, Ping, SendPing, SendPong, Stop, Left}) ->
    lists:flatten(io_lib:format("start=~b ping=~b send_ping=~b send_pong=~b stop=~b pings_left=~b",
                                [Start, Ping, SendPing, SendPong, Stop, Left])).

sp_ping(Main, Pong, Left, {Starts, Pings, SendPongs}) ->
    receive
        start -> Pong ! {send_ping, self()}, sp_ping(Main, Pong, Left - 1, {Starts + 1, Pings, SendPongs});
        ping -> Pong ! {send_ping, self()}, sp_ping(Main, Pong, Left - 1, {Starts, Pings + 1, SendPongs});
        send_pong when Left > 0 -> self() ! ping, sp_ping(Main, Pong, Left, {Starts, Pings, SendPongs + 1});
        send_pong -> Pong ! stop, Main ! {ping_done, Starts, Pings, SendPongs + 1, Left}
    end.

sp_pong(Main, SendPings) ->
    receive
        {send_ping, Ping} -> Ping ! send_pong, sp_pong(Main, SendPings + 1);
        stop -> Main ! {pong_done, erlang:monotonic_time(nanosecond), SendPings, 1}
    end.

%% savina_count: the producer's start sends `increments` Increments and a Retrieve to the
%% counter, whose Result ends the run.
savina_count(Increments) ->
    Self = self(),
    Start = erlang:monotonic_time(nanosecond),
    Counter = spawn(fun() -> sc_counter(0) end),
    Producer = spawn(fun() -> sc_producer(Self, Counter, Increments) end),
    Producer ! increment,
    receive {count_done, End, Counted, Retrieves, Result} -> ok end,
    Tally = {1, Counted, Retrieves, 1, Result + lie()},
    {End - Start, 1 + Counted + Retrieves + 1, sc_answer(Tally),
     sc_answer({1, Increments, 1, 1, Increments}), #{}}.

sc_answer({Start, Increments, Retrieves, Results, Result}) ->
    lists:flatten(io_lib:format("start=~b increments=~b retrieves=~b results=~b result=~b",
                                [Start, Increments, Retrieves, Results, Result])).

sc_producer(Main, Counter, Increments) ->
    receive increment -> ok end,  % the start, Savina's IncrementMessage to the producer
    [Counter ! increment || _ <- lists:seq(1, Increments)],
    Counter ! {retrieve, self()},
    receive {result, Count, Counted} ->
        Main ! {count_done, erlang:monotonic_time(nanosecond), Counted, 1, Count}
    end.

sc_counter(Count) ->
    receive
        increment -> sc_counter(Count + 1);
        {retrieve, Producer} -> Producer ! {result, Count, Count}  % it counted each increment
    end.

%% savina_threadring: each member's Data names its next; Ping(R) counts down around the ring,
%% Ping(0) starts the Exits, Exit(N) counted down as each member exits. The Exit(0) reaches the
%% first member to have exited: Akka's dead letter, which that process stays to take (it knows
%% it is first: its Exit carried `actors`), the run's end.
savina_threadring(Actors, Pings) ->
    Self = self(),
    Start = erlang:monotonic_time(nanosecond),
    Ring = list_to_tuple([spawn(fun() -> tr_member(Self, I, Actors, none, false, {0, 0, 0, 0, 0}) end)
                          || I <- lists:seq(0, Actors - 1)]),
    [element(I + 1, Ring) ! {data, element((I + 1) rem Actors + 1, Ring)} || I <- lists:seq(0, Actors - 1)],
    element(1, Ring) ! {ping, Pings},
    receive {dead_letter, End} -> ok end,
    Counts = maps:from_list([receive {member, I, C} -> {I, C} end || _ <- lists:seq(1, Actors)]),
    Stops = Pings + 1,
    Want = fun(I) -> {1, Stops div Actors + if I < Stops rem Actors -> 1; true -> 0 end, 1,
                      if I =:= Stops rem Actors -> 1; true -> 0 end,
                      if I =:= Pings rem Actors -> 1; true -> 0 end} end,
    {Data, Ps, Exits, Dead, _} = lists:foldl(
        fun(I, {A, B, C, D, E}) -> {A1, B1, C1, D1, E1} = maps:get(I, Counts),
                                   {A + A1, B + B1, C + C1, D + D1, E + E1} end,
        {0, lie(), 0, 0, 0}, lists:seq(0, Actors - 1)),
    LastAt = lists:foldl(fun(I, At) -> case maps:get(I, Counts) of {_, _, _, _, 1} -> I; _ -> At end end,
                         -1, lists:seq(0, Actors - 1)),
    Uneven = length([I || I <- lists:seq(0, Actors - 1), maps:get(I, Counts) =/= Want(I)]),
    {End - Start, Data + Ps + Exits + Dead, tr_answer(Data, Ps, Exits, Dead, LastAt, Uneven),
     tr_answer(Actors, Pings + 1, Actors, 1, Pings rem Actors, 0), #{}}.

tr_answer(Data, Pings, Exits, Dead, LastAt, Uneven) ->
    lists:flatten(io_lib:format("data=~b pings=~b exits=~b dead_letters=~b last_ping_at=~b uneven_actors=~b",
                                [Data, Pings, Exits, Dead, LastAt, Uneven])).

tr_member(Main, I, Actors, Next, Exited, {Data, Pings, Exits, Dead, Last}) ->
    receive
        {data, N} -> tr_member(Main, I, Actors, N, Exited, {Data + 1, Pings, Exits, Dead, Last});
        {ping, 0} -> Next ! {exit, Actors}, tr_member(Main, I, Actors, Next, Exited, {Data, Pings + 1, Exits, Dead, Last + 1});
        {ping, R} -> Next ! {ping, R - 1}, tr_member(Main, I, Actors, Next, Exited, {Data, Pings + 1, Exits, Dead, Last});
        {exit, _} when Exited ->
            Main ! {dead_letter, erlang:monotonic_time(nanosecond)},
            Main ! {member, I, {Data, Pings, Exits, Dead + 1, Last}};
        {exit, Left} ->
            Left > 0 andalso (Next ! {exit, Left - 1}),
            Now = {Data, Pings, Exits + 1, Dead, Last},
            case Left of
                Actors -> tr_member(Main, I, Actors, Next, true, Now);  % the first: it takes the dead letter
                _ -> Main ! {member, I, Now}
            end
    end.

%% savina_fjthrput and savina_fjcreate: Savina's job, the square of sin(37.2) (math:sin is C's sin,
%% as ours), the angle in the message; results summed into the answer, printed as C's "%.17g".
-define(THETA, 37.2).
fj_job(Theta) -> S = math:sin(Theta), S * S.

repeated_sum(Value, Count) -> repeated_sum(Value, Count, 0.0).
repeated_sum(_, 0, Sum) -> Sum;
repeated_sum(Value, Count, Sum) -> repeated_sum(Value, Count - 1, Sum + Value).

%% C's "%.17g": 17 significant digits, fixed unless the exponent is below -4 or 17 and above,
%% trailing zeros (and a bare point) dropped.
g17(X) ->
    [Mantissa, Exp] = string:split(float_to_list(X, [{scientific, 16}]), "e"),
    E = list_to_integer(Exp),
    {Sign, Digits} = case Mantissa of [$- | M] -> {"-", M -- "."}; M -> {"", M -- "."} end,
    Trim = fun(S) -> string:trim(string:trim(S, trailing, "0"), trailing, ".") end,
    Sign ++ if E < -4; E >= 17 ->
                    Trim([hd(Digits), $. | tl(Digits)]) ++ io_lib:format("e~c~2..0b", [if E < 0 -> $-; true -> $+ end, abs(E)]);
               E < 0 -> Trim("0." ++ lists:duplicate(-E - 1, $0) ++ Digits);
               true -> Trim(lists:sublist(Digits, E + 1) ++ "." ++ lists:nthtail(E + 1, Digits))
            end.

%% savina_fjthrput: this process (Savina's main thread) spawns `actors` workers and a sink, then
%% sends `messages` rounds of one job to each worker in turn; each worker reports its tally to
%% the sink after its last job, and the sink adds the workers' sums in the workers' order.
savina_fjthrput(Messages, Actors) ->
    Self = self(),
    Start = erlang:monotonic_time(nanosecond),
    Sink = spawn(fun() -> ft_sink(Self, Actors, 0, 0, 0, #{}) end),
    Workers = [spawn(fun() -> ft_worker(Sink, I, Messages, 0, 0, 0.0) end) || I <- lists:seq(0, Actors - 1)],
    ft_send(Workers, Messages),
    receive {fj_done, End, Jobs, Done, Bad, Sum} -> ok end,
    {End - Start, Jobs + Done, ft_answer(Jobs, Done, Bad, Sum + lie()),
     ft_answer(Actors * Messages, Actors, 0, repeated_sum(repeated_sum(fj_job(?THETA), Messages), Actors)), #{}}.

ft_answer(Jobs, Done, Bad, Sum) ->
    lists:flatten(io_lib:format("jobs=~b workers_done=~b bad_results=~b result_sum=~s", [Jobs, Done, Bad, g17(Sum)])).

ft_send(_, 0) -> ok;
ft_send(Workers, Left) -> [W ! {job, ?THETA} || W <- Workers], ft_send(Workers, Left - 1).

ft_worker(Sink, I, Messages, Jobs, Bad, Sum) ->
    receive
        {job, Theta} ->
            R = fj_job(Theta),
            Bad1 = Bad + if R > 0 -> 0; true -> 1 end,
            case Jobs + 1 of
                Messages -> Sink ! {tally, I, Messages, Bad1, Sum + R};  % Savina's worker exits
                J -> ft_worker(Sink, I, Messages, J, Bad1, Sum + R)
            end
    end.

ft_sink(Main, Actors, Done, Jobs, Bad, Sums) ->
    receive
        {tally, I, J, B, S} ->
            Sums1 = Sums#{I => S},
            case Done + 1 of
                Actors ->
                    Sum = lists:foldl(fun(K, Acc) -> Acc + maps:get(K, Sums1) end, 0.0, lists:seq(0, Actors - 1)),
                    Main ! {fj_done, erlang:monotonic_time(nanosecond), Jobs + J, Actors, Bad + B, Sum};
                D -> ft_sink(Main, Actors, D, Jobs + J, Bad + B, Sums1)
            end
    end.

%% savina_fjcreate: this process spawns each worker and sends it one job; the worker does it,
%% reports to the sink and exits. The sink is spawned before the clock, as ours starts its sink
%% before the phase.
savina_fjcreate(Workers) ->
    Self = self(),
    Sink = spawn(fun() -> fc_sink(Self, Workers, 0, 0, 0, 0.0, #{}) end),
    Start = erlang:monotonic_time(nanosecond),
    fc_fork(Sink, 0, Workers),
    receive {fc_done, End, Done, Repeated, Bad, Sum} -> ok end,
    {End - Start, 2 * Done, fc_answer(Done, Repeated, Bad, Sum + lie()),
     fc_answer(Workers, 0, 0, repeated_sum(fj_job(?THETA), Workers)), #{}}.

fc_answer(Done, Repeated, Bad, Sum) ->
    lists:flatten(io_lib:format("workers_done=~b repeated=~b bad_results=~b result_sum=~s",
                                [Done, Repeated, Bad, g17(Sum)])).

fc_fork(_, N, N) -> ok;
fc_fork(Sink, I, N) ->
    W = spawn(fun() -> receive {job, Theta} -> Sink ! {done, I, fj_job(Theta)} end end),
    W ! {job, ?THETA},
    fc_fork(Sink, I + 1, N).

fc_sink(Main, Workers, Done, Repeated, Bad, Sum, Seen) ->
    receive
        {done, I, R} ->
            Repeated1 = Repeated + case maps:is_key(I, Seen) of true -> 1; false -> 0 end,
            Bad1 = Bad + if R > 0 -> 0; true -> 1 end,
            case Done + 1 of
                Workers -> Main ! {fc_done, erlang:monotonic_time(nanosecond), Workers, Repeated1, Bad1, Sum + R};
                D -> fc_sink(Main, Workers, D, Repeated1, Bad1, Sum + R, Seen#{I => true})
            end
    end.

%% savina_chameneos: the mall process spawns the creatures when it starts; each asks the mall for
%% a meeting ({meet, Id, Colour, Pid}: Savina's MeetMsg carries its sender) when it starts and
%% after each meeting. The mall pairs a request with the one waiting (forwarding it to the waiting
%% creature), and after `meetings` answers each request with Exit; each creature then reports its
%% count, and the last report ends the run. As chameneos.hpp's Mall and Creature.
savina_chameneos(Creatures, Meetings) ->
    Self = self(),
    Start = erlang:monotonic_time(nanosecond),
    spawn(fun() -> ch_mall(Self, Creatures, Meetings) end),
    receive {ch_done, End, Answer, Handled} -> ok end,
    {End - Start, Handled, Answer, ch_answer(Meetings, Creatures + 2 * Meetings, Creatures, 2 * Meetings,
                                             Creatures, 0, true), #{}}.

ch_answer(Made, Requests, Exits, Counted, Reports, Wrong, Kept) ->
    lists:flatten(io_lib:format("meetings=~b requests=~b exits=~b counted=~b reports=~b wrong_changes=~b "
                                "colour_invariant=~s", [Made, Requests, Exits, Counted, Reports, Wrong,
                                                        if Kept -> "kept"; true -> "broken" end])).

%% Colours: 0 red, 1 yellow, 2 blue, 3 faded.
ch_complement(Mine, Other) when Mine =:= 3; Other =:= 3 -> 3;
ch_complement(Same, Same) -> Same;
ch_complement(Mine, Other) -> 3 - Mine - Other.

ch_mall(Main, Creatures, Meetings) ->
    Mall = self(),
    [spawn(fun() -> ch_creature(Mall, I, I rem 3, 0, 0, 0) end) || I <- lists:seq(0, Creatures - 1)],
    ch_mall(Main, Creatures, Meetings, none, #{made => 0, requests => 0 + lie(), exits => 0, reports => 0,
                                               bad => 0, counted => 0, handled => 0, wrong => 0,
                                               finals => {0, 0, 0}, reported => #{}}).

ch_mall(Main, Creatures, Meetings, Waiting, #{made := Made, requests := Requests} = S) ->
    receive
        {meet, _, _, Pid} when Made =:= Meetings ->
            Pid ! exit,
            ch_mall(Main, Creatures, Meetings, Waiting, S#{requests := Requests + 1, exits := maps:get(exits, S) + 1});
        {meet, _, _, _} = Request when Waiting =:= none ->
            ch_mall(Main, Creatures, Meetings, Request, S#{requests := Requests + 1});
        {meet, _, _, _} = Request ->
            {meet, _, _, WaitingPid} = Waiting,
            WaitingPid ! Request,
            ch_mall(Main, Creatures, Meetings, none, S#{requests := Requests + 1, made := Made + 1});
        {count, Id, Met, Colour, Wrong, Handled} ->
            #{reports := Reports, bad := Bad, reported := Reported, finals := Finals} = S,
            Bad1 = Bad + case maps:is_key(Id, Reported) of true -> 1; false -> 0 end
                + case Colour of 3 -> 1; _ -> 0 end,
            Finals1 = case Colour of 3 -> Finals; _ -> setelement(Colour + 1, Finals, element(Colour + 1, Finals) + 1) end,
            S1 = S#{reports := Reports + 1, bad := Bad1, reported := Reported#{Id => true}, finals := Finals1,
                    counted := maps:get(counted, S) + Met, wrong := maps:get(wrong, S) + Wrong,
                    handled := maps:get(handled, S) + Handled},
            case Reports + 1 of
                Creatures ->
                    End = erlang:monotonic_time(nanosecond),
                    Start = lists:foldl(fun(I, T) -> setelement(I rem 3 + 1, T, element(I rem 3 + 1, T) + 1) end,
                                        {0, 0, 0}, lists:seq(0, Creatures - 1)),
                    Mod3 = fun(A, B) -> (A + 3 * (B + 1) - B) rem 3 end,
                    {F0, F1, F2} = Finals1,
                    {S0, S1c, S2} = Start,
                    Kept = Mod3(F0, F1) =:= Mod3(S0, S1c) andalso Mod3(F1, F2) =:= Mod3(S1c, S2)
                        andalso Waiting =:= none,
                    #{made := M, requests := R, exits := E, counted := C, reports := Rp, bad := B, wrong := W,
                      handled := H} = S1,
                    Main ! {ch_done, End, ch_answer(M, R, E, C, Rp - B, W, Kept), R + Rp + H};
                _ -> ch_mall(Main, Creatures, Meetings, Waiting, S1)
            end
    end.

ch_creature(Mall, Id, Colour, Met, Wrong, Handled) ->
    Mall ! {meet, Id, Colour, self()},
    ch_creature_wait(Mall, Id, Colour, Met, Wrong, Handled).

ch_creature_wait(Mall, Id, Colour, Met, Wrong, Handled) ->
    receive
        {meet, _, Other, Partner} ->  % the mall's forward of its partner's request
            Now = ch_complement(Colour, Other),
            Partner ! {change, Now, Colour},
            ch_creature(Mall, Id, Now, Met + 1, Wrong, Handled + 1);
        {change, To, PartnerWas} ->
            Wrong1 = Wrong + case ch_complement(Colour, PartnerWas) of To -> 0; _ -> 1 end,
            ch_creature(Mall, Id, To, Met + 1, Wrong1, Handled + 1);
        exit ->
            Mall ! {count, Id, Met, Colour, Wrong, Handled + 1}
    end.

%% savina_big: `actors` processes, each given the others' pids (a setup message before its start,
%% not counted: Savina's NeighborMessage, ours a shared table); each start (Savina's Pong(-1))
%% sends a Ping to a neighbour its 16-bit generator draws, each Pong the next, until it has sent
%% `pings`; then it reports to this process (the sink), whose last report ends the run. Each
%% answers every Ping with a Pong, and after the run tells how many it got.
savina_big(Actors, Pings, Seed) ->
    Self = self(),
    Start = erlang:monotonic_time(nanosecond),
    All = list_to_tuple([spawn(fun() -> receive {neighbours, T} -> big_actor(Self, T, I, Pings, Seed + I, -1, 0, 0, 0, 0) end end)
                         || I <- lists:seq(0, Actors - 1)]),
    [P ! {neighbours, All} || P <- tuple_to_list(All)],
    [P ! {pong, -1} || P <- tuple_to_list(All)],
    {Finished, Repeated, Sent, Pongs, Wrong} = big_sink(Actors, 0, 0, 0, 0, 0, #{}),
    End = erlang:monotonic_time(nanosecond),
    [P ! stop || P <- tuple_to_list(All)],
    Pinged = [receive {pinged, I, C} -> C end || I <- lists:seq(0, Actors - 1)],
    Plan = big_plan(Actors, Pings, Seed),
    Received = lists:sum(Pinged) + lie(),
    Uneven = length([x || {C, P} <- lists:zip(Pinged, Plan), C =/= P]),
    {End - Start, Actors + Received + Pongs + Finished,
     big_answer(Finished, Repeated, Sent, Pongs, Wrong, Uneven, lists:max(Pinged)),
     big_answer(Actors, 0, Actors * Pings, Actors * Pings, 0, 0, lists:max(Plan)), #{}}.

big_answer(Finished, Repeated, Pings, Pongs, Wrong, Uneven, Most) ->
    lists:flatten(io_lib:format("finished=~b repeated=~b pings=~b pongs=~b wrong_pongs=~b uneven_actors=~b "
                                "most_pinged=~b", [Finished, Repeated, Pings, Pongs, Wrong, Uneven, Most])).

big_next(Value) -> (Value * 1309 + 13849) band 65535.

big_plan(Actors, Pings, Seed) ->
    Counts = lists:foldl(
               fun(I, Acc) -> big_draw(Seed + I, Pings, Actors, Acc) end,
               maps:from_list([{J, 0} || J <- lists:seq(0, Actors - 1)]), lists:seq(0, Actors - 1)),
    [maps:get(J, Counts) || J <- lists:seq(0, Actors - 1)].

big_draw(_, 0, _, Acc) -> Acc;
big_draw(Value, Left, Actors, Acc) ->
    V = big_next(Value),
    big_draw(V, Left - 1, Actors, maps:update_with(V rem Actors, fun(C) -> C + 1 end, Acc)).

big_sink(Actors, Finished, Repeated, Sent, Pongs, Wrong, Seen) when Finished =:= Actors ->
    _ = Seen, {Finished, Repeated, Sent, Pongs, Wrong};
big_sink(Actors, Finished, Repeated, Sent, Pongs, Wrong, Seen) ->
    receive
        {finished, I, S, P, W} ->
            big_sink(Actors, Finished + 1, Repeated + case maps:is_key(I, Seen) of true -> 1; false -> 0 end,
                     Sent + S, Pongs + max(P - 1, 0), Wrong + W, Seen#{I => true})
    end.

big_actor(Sink, All, I, Pings, Value, Expected, Sent, Pongs, Wrong, Pinged) ->
    receive
        {ping, From} ->
            element(From + 1, All) ! {pong, I},
            big_actor(Sink, All, I, Pings, Value, Expected, Sent, Pongs, Wrong, Pinged + 1);
        {pong, From} ->
            Wrong1 = Wrong + if From =:= Expected -> 0; true -> 1 end,
            case Sent of
                Pings ->
                    Sink ! {finished, I, Sent, Pongs + 1, Wrong1},
                    big_actor(Sink, All, I, Pings, Value, -1, Sent, Pongs + 1, Wrong1, Pinged);
                _ ->
                    V = big_next(Value),
                    To = V rem tuple_size(All),
                    element(To + 1, All) ! {ping, I},
                    big_actor(Sink, All, I, Pings, V, To, Sent + 1, Pongs + 1, Wrong1, Pinged)
            end;
        stop ->
            Sink ! {pinged, I, Pinged}
    end.

%% --- Savina's concurrency benchmarks ------------------------------------------------------
%% Savina's 8-15 (savina_concdict, savina_concsll, savina_bndbuffer, savina_philosopher,
%% savina_barber, savina_cigsmok, savina_logmap, savina_banking), in the micro
%% benchmarks' idiom: Savina's actors as processes, each its own (unbounded) mailbox; the
%% messages Savina's, the counts and answers our kernels' (native/kernels/savina/<name>.cpp),
%% each answer checked here against a sequential model of its own that replays the seeded
%% generators bit for bit (random.hpp's SplitMix64, Savina's PseudoRandom, the busy work's LCG,
%% FNV-1a). As in Savina, the central actor (logmap's master, banking's teller, cigsmok's
%% arbiter, bndbuffer's manager, concdict's and concsll's master) spawns the others when it
%% starts (but concdict's and concsll's server, spawned by the kernel's process), where ours makes
%% every agent in one coop. Where Savina's actor stashes what comes while it waits for a reply
%% (logmap's series worker, banking's account), the process waits for the reply in a selective
%% receive, the reply tagged with a reference made just before the request (so the receive looks
%% only at messages come since: the VM's optimisation of request and reply), and the messages
%% meanwhile stay in its mailbox, taken up after in their order. A process whose mailbox fills
%% (logmap's series workers, banking's teller) keeps its queue off its heap (message_queue_data =
%% off_heap), as Akka's mailboxes are queues apart from the actor. 64-bit arithmetic (the
%% generators, the digests) is Erlang's exact integers masked to 64 bits; past 2^59 an integer is
%% a bignum on the heap, so a SplitMix64 finalizer costs about 190 ns here (ours a few), inside
%% the phase where ours draws inside it; cigsmok's busy work keeps its state in small integers
%% (busy_work). Philosopher's and barber's message counts depend on the schedule (denials,
%% customers turned away), their answers do not: labctl holds each count to the range our kernel
%% states. Their actors are spawned by the kernel's process, as Savina's runIteration makes them
%% (barber's customers by the factory).

-define(M64, 16#FFFFFFFFFFFFFFFF).
-define(FNV_BASIS, 16#cbf29ce484222325).

%% FNV-1a over 64-bit words (random.hpp's fnv_fold).
fnv(Hash, Word) -> ((Hash bxor Word) * 16#100000001b3) band ?M64.

%% SplitMix64's finalizer (random.hpp's mix64).
mix64(Z0) ->
    Z1 = ((Z0 bxor (Z0 bsr 30)) * 16#BF58476D1CE4E5B9) band ?M64,
    Z2 = ((Z1 bxor (Z1 bsr 27)) * 16#94D049BB133111EB) band ?M64,
    Z2 bxor (Z2 bsr 31).

%% random.hpp's SplitMix64, its state started at mix64(seed * 65536 + stream); a draw returns
%% the value and the next state.
splitmix(Seed, Stream) -> mix64((Seed * 65536 + Stream) band ?M64).

splitmix_next(State) ->
    Next = (State + 16#9E3779B97F4A7C15) band ?M64,
    {mix64(Next), Next}.

%% random.hpp's busy_work: `steps` steps of a 64-bit LCG from `steps`, the synthetic work in
%% place of Savina's busy-waits (cigsmok's spells). The state is kept in three limbs of 22, 22
%% and 20 bits, so that every product and sum is a small integer (below 2^59) and a step
%% allocates nothing: the plain product masked to 64 bits makes a bignum on the heap at every
%% step, about 3 times slower in a spawned process (1,000 spells of 10 to 1,009 steps: 45-50
%% against 113-186 ns a step, on a loaded 2-core machine). The model (cs_model) takes the plain one.
-define(LCG_A, 6364136223846793005).
-define(LCG_C, 1442695040888963407).
-define(M22, 16#3FFFFF).

busy_work(Steps) -> busy_work(Steps band ?M22, (Steps bsr 22) band ?M22, Steps bsr 44, Steps).

busy_work(X0, X1, X2, 0) -> X0 bor (X1 bsl 22) bor (X2 bsl 44);
busy_work(X0, X1, X2, Left) ->
    %% (X * A + C) mod 2^64, limb by limb, each carry passed up; the top limb keeps 20 bits.
    R0 = X0 * (?LCG_A band ?M22) + (?LCG_C band ?M22),
    R1 = X0 * ((?LCG_A bsr 22) band ?M22) + X1 * (?LCG_A band ?M22) + ((?LCG_C bsr 22) band ?M22) + (R0 bsr 22),
    R2 = X0 * (?LCG_A bsr 44) + X1 * ((?LCG_A bsr 22) band ?M22) + X2 * (?LCG_A band ?M22) + (?LCG_C bsr 44)
        + (R1 bsr 22),
    busy_work(R0 band ?M22, R1 band ?M22, R2 band 16#FFFFF, Left - 1).

%% The same steps on Erlang's exact integers, masked to 64 bits: the models' own.
busy_work_plain(Steps) -> busy_work_plain(Steps, Steps).

busy_work_plain(X, 0) -> X;
busy_work_plain(X, Left) -> busy_work_plain((X * ?LCG_A + ?LCG_C) band ?M64, Left - 1).

%% C's "%016llx".
hex16(N) -> string:lowercase(lists:flatten(io_lib:format("~16.16.0b", [N]))).

float_bits(F) -> <<Bits:64>> = <<F:64/float>>, Bits.

now_ns() -> erlang:monotonic_time(nanosecond).

%% savina_logmap (14. Logistic Map): the master spawns `series` rate computers and `series`
%% series workers, then takes Start from this process: `terms` rounds of NextTerm to every worker,
%% then a GetTerm to each. For each NextTerm a worker sends its term to its computer and waits
%% for the Result (selective receive: the NextTerms meanwhile wait in its mailbox); on GetTerm it
%% reports its series to the master, whose last report ends the run. Series i has rate
%% start_rate + i*increment and starts at term i*increment; the next term is rate*term*(1-term),
%% in Savina's order of operations (Erlang's floats are IEEE doubles, so the terms are ours bit
%% for bit). Differences as ours (no Stop inside the clock: the computers are told to stop after
%% it, and report their counts; hashed terms; the last terms summed in series order).
savina_logmap(Terms, Series, StartRate, Increment) ->
    Self = self(),
    Start = now_ns(),
    Master = spawn(fun() -> lm_master(Self, Terms, Series, StartRate, Increment) end),
    Master ! start,
    receive {lm_done, End, Reported, Computed, Hash, Sum, Computers, MasterHandled} -> ok end,
    [C ! {stop, Self} || C <- Computers],
    %% The tallies in any order (a receive naming each in turn would scan those come before it).
    Handled = MasterHandled + lists:sum([receive {lm_computer, _, H} -> H end || _ <- Computers])
        + lists:sum([receive {lm_worker, _, H} -> H end || _ <- Computers]),
    {ModelHash, ModelSum} = lm_model(Terms, Series, StartRate, Increment),
    {End - Start, Handled, lm_answer(Reported, Computed + lie(), Hash, Sum),
     lm_answer(Series, Series * Terms, ModelHash, ModelSum), #{}}.

lm_answer(Reported, Computed, Hash, Sum) ->
    lists:flatten(io_lib:format("series_reported=~b terms_computed=~b terms_hash=~s final_sum=~s",
                                [Reported, Computed, hex16(Hash), g17(Sum)])).

%% Series i's rate and start term, as Savina's master computes them.
lm_rate(StartRate, Increment, I) -> StartRate + I * Increment.
lm_start(Increment, I) -> I * Increment.

%% Savina's computeNextTerm, its order of operations.
lm_next(Rate, Term) -> Rate * Term * (1 - Term).

lm_master(Main, Terms, Series, StartRate, Increment) ->
    Self = self(),
    Indices = lists:seq(0, Series - 1),
    Computers = [spawn(fun() -> lm_computer(lm_rate(StartRate, Increment, I), 0) end) || I <- Indices],
    %% A worker's mailbox fills with the master's flood of NextTerms: kept off its heap, where each
    %% garbage collection would walk the whole queue (terms=25,000 took 7.8 s with the queue on
    %% the heap, 0.45-0.5 s off it, on a loaded 2-core machine).
    Workers = [spawn_opt(fun() -> lm_worker(Main, Self, Computer, I, lm_start(Increment, I), 0, ?FNV_BASIS, 0) end,
                         [{message_queue_data, off_heap}])
               || {I, Computer} <- lists:zip(Indices, Computers)],
    receive start -> ok end,
    lm_flood(Workers, Terms),
    [W ! get_term || W <- Workers],
    lm_collect(Main, Series, Computers, 0, 0, #{}).

lm_flood(_, 0) -> ok;
lm_flood(Workers, Left) -> lists:foreach(fun(W) -> W ! next_term end, Workers), lm_flood(Workers, Left - 1).

%% The reports, kept by series (the first of each), folded in series order once all have come.
lm_collect(Main, Series, Computers, Reported, Computed, Kept) when Reported =:= Series ->
    {Hash, Sum} = lists:foldl(fun(I, {H, S}) -> {SeriesHash, Last} = maps:get(I, Kept, {0, 0.0}),
                                               {fnv(H, SeriesHash), S + Last} end,
                              {?FNV_BASIS, 0.0}, lists:seq(0, Series - 1)),
    Main ! {lm_done, now_ns(), Reported, Computed, Hash, Sum, Computers, 1 + Reported};
lm_collect(Main, Series, Computers, Reported, Computed, Kept) ->
    receive
        {series_done, Id, C, Hash, Last} ->
            lm_collect(Main, Series, Computers, Reported + 1, Computed + C,
                       case maps:is_key(Id, Kept) of true -> Kept; false -> Kept#{Id => {Hash, Last}} end)
    end.

lm_computer(Rate, Handled) ->
    receive
        {compute, Worker, Ref, Term} ->
            Worker ! {Ref, lm_next(Rate, Term)},
            lm_computer(Rate, Handled + 1);
        {stop, Main} -> Main ! {lm_computer, self(), Handled}
    end.

lm_worker(Main, Master, Computer, Id, Term, Computed, Hash, Handled) ->
    receive
        next_term ->
            Ref = make_ref(),
            Computer ! {compute, self(), Ref, Term},
            receive {Ref, Next} -> ok end,  % Savina's stash: the mailbox keeps the rest in order
            lm_worker(Main, Master, Computer, Id, Next, Computed + 1, fnv(Hash, float_bits(Next)), Handled + 2);
        get_term ->
            Master ! {series_done, Id, Computed, Hash, Term},
            Main ! {lm_worker, Id, Handled + 1}
    end.

%% Every series computed in one loop, the operations in the processes' order.
lm_model(Terms, Series, StartRate, Increment) ->
    lists:foldl(fun(I, {Hash, Sum}) ->
                        {SeriesHash, Last} = lm_series(lm_rate(StartRate, Increment, I), lm_start(Increment, I),
                                                       Terms, ?FNV_BASIS),
                        {fnv(Hash, SeriesHash), Sum + Last}
                end, {?FNV_BASIS, 0.0}, lists:seq(0, Series - 1)).

lm_series(_, Term, 0, Hash) -> {Hash, Term};
lm_series(Rate, Term, Left, Hash) ->
    Next = lm_next(Rate, Term),
    lm_series(Rate, Next, Left - 1, fnv(Hash, float_bits(Next))).

%% savina_banking (15. Bank Transaction): the teller spawns the accounts, then takes Start from
%% this process and sends every transaction's Credit at once to its source account (a SplitMix64
%% draw from (seed, 0), as ours: a source below (accounts / 10) * 8, a destination above it, an
%% amount below 100,000 cents). The source takes the amount from its balance, sends the
%% destination a Debit and waits for the Reply (selective receive: the rest waits in its
%% mailbox), then tells the teller the transaction is complete; the destination adds the amount
%% and replies. Once every transaction is complete the teller stops every account; the last
%% account to handle its Stop ends the run (each reads the clock there: the run's end is the
%% latest). Differences as ours (integer cents, the SplitMix64 stream, ids in the messages, a
%% stashed message handled in place); each account's balance, counts and clock reach this
%% process in a message when it stops.
-define(INITIAL_BALANCE, 1000000000000).
-define(AMOUNT_LIMIT, 100000).

savina_banking(Accounts, Transactions, Seed) ->
    Self = self(),
    Start = now_ns(),
    %% The completions pile up in the teller's mailbox while it sends the credits: kept off its
    %% heap, where each garbage collection would walk them all (transactions=50,000: 255 ms with
    %% the queue on the heap, 125-167 ms off it, on a loaded 2-core machine).
    Teller = spawn_opt(fun() -> bk_teller(Self, Accounts, Transactions, Seed) end, [{message_queue_data, off_heap}]),
    Teller ! start,
    receive {bk_teller, Completed, Repeated, TellerHandled} -> ok end,
    %% The accounts' tallies as they come, then in account order (for the digest).
    Tallies = [T || {_, T} <- lists:sort([receive {bk_account, I, Balance, Credits, Debits, Handled, At} ->
                                                  {I, {Balance, Credits, Debits, Handled, At}}
                                          end || _ <- lists:seq(1, Accounts)])],
    End = lists:max([At || {_, _, _, _, At} <- Tallies]),
    Balances = [Balance || {Balance, _, _, _, _} <- Tallies],
    Answer = bk_answer(Completed + lie(), Repeated, lists:sum([C || {_, C, _, _, _} <- Tallies]),
                       lists:sum([D || {_, _, D, _, _} <- Tallies]), length(Tallies), Balances),
    {End - Start, TellerHandled + lists:sum([H || {_, _, _, H, _} <- Tallies]), Answer,
     bk_answer(Transactions, 0, Transactions, Transactions, Accounts, bk_replay(Accounts, Transactions, Seed)), #{}}.

bk_answer(Completed, Repeated, Credits, Debits, Stopped, Balances) ->
    {Digest, _} = lists:foldl(fun(B, {D, I}) -> {(D + mix64(((B band ?M64) + mix64(I)) band ?M64)) band ?M64, I + 1} end,
                              {0, 0}, Balances),
    lists:flatten(io_lib:format("completed=~b repeated=~b credits=~b debits=~b stopped=~b total=~b digest=~b",
                                [Completed, Repeated, Credits, Debits, Stopped, lists:sum(Balances), Digest])).

%% banking.cpp's draw: {source, destination, amount, the generator's next state}.
bk_draw(State0, Accounts) ->
    {A, State1} = splitmix_next(State0),
    Source = A rem (Accounts div 10 * 8),
    {B, State2} = splitmix_next(State1),
    Step = case B rem (Accounts - Source) of 0 -> 1; S -> S end,
    {C, State3} = splitmix_next(State2),
    {Source, Source + Step, C rem ?AMOUNT_LIMIT, State3}.

bk_teller(Main, Accounts, Transactions, Seed) ->
    Self = self(),
    All = list_to_tuple([spawn(fun() -> bk_account(Main, Self, I, ?INITIAL_BALANCE, 0, 0, 0) end)
                         || I <- lists:seq(0, Accounts - 1)]),
    receive start -> ok end,
    bk_credits(All, Accounts, 0, Transactions, splitmix(Seed, 0)),
    Seen = atomics:new(max(Transactions, 1), [{signed, false}]),
    {Completed, Repeated} = bk_completions(Transactions, Seen, 0, 0),
    [A ! stop || A <- tuple_to_list(All)],
    Main ! {bk_teller, Completed, Repeated, 1 + Completed}.

bk_credits(_, _, Transactions, Transactions, _) -> ok;
bk_credits(All, Accounts, Id, Transactions, State) ->
    {Source, Destination, Amount, Next} = bk_draw(State, Accounts),
    element(Source + 1, All) ! {credit, Id, Amount, element(Destination + 1, All)},
    bk_credits(All, Accounts, Id + 1, Transactions, Next).

bk_completions(Transactions, _, Completed, Repeated) when Completed =:= Transactions -> {Completed, Repeated};
bk_completions(Transactions, Seen, Completed, Repeated) ->
    receive
        {completed, Id} ->
            Again = if Id >= 0, Id < Transactions -> atomics:exchange(Seen, Id + 1, 1); true -> 0 end,
            bk_completions(Transactions, Seen, Completed + 1, Repeated + Again)
    end.

bk_account(Main, Teller, I, Balance, Credits, Debits, Handled) ->
    receive
        {credit, Id, Amount, Destination} ->
            Ref = make_ref(),
            Destination ! {debit, Id, Amount, self(), Ref},
            %% Savina's stash: the mailbox keeps the rest in order. The Reply's id, not the one
            %% awaited, goes to the teller, as ours.
            receive {Ref, Replied} -> Teller ! {completed, Replied} end,
            bk_account(Main, Teller, I, Balance - Amount, Credits + 1, Debits, Handled + 2);
        {debit, Id, Amount, Creditor, Ref} ->
            Creditor ! {Ref, Id},
            bk_account(Main, Teller, I, Balance + Amount, Credits, Debits + 1, Handled + 1);
        stop ->
            Main ! {bk_account, I, Balance, Credits, Debits, Handled + 1, now_ns()}
    end.

%% The transactions replayed in the teller's order: each final balance (integer sums commute).
bk_replay(Accounts, Transactions, Seed) ->
    Balances = atomics:new(Accounts, [{signed, true}]),
    bk_replay(Balances, Accounts, Transactions, splitmix(Seed, 0)),
    [?INITIAL_BALANCE + atomics:get(Balances, I) || I <- lists:seq(1, Accounts)].

bk_replay(_, _, 0, _) -> ok;
bk_replay(Balances, Accounts, Left, State) ->
    {Source, Destination, Amount, Next} = bk_draw(State, Accounts),
    atomics:sub(Balances, Source + 1, Amount),
    atomics:add(Balances, Destination + 1, Amount),
    bk_replay(Balances, Accounts, Left - 1, Next).

%% savina_cigsmok (13. Cigarette Smokers): the arbiter spawns the smokers, then takes Start from
%% this process; Start and each StartedSmoking pick the next smoker and its spell of work from
%% Savina's PseudoRandom (seeded with `seed`, or rounds*smokers where it is 0, as Savina's),
%% until `rounds` rounds; then Exit to every smoker, each answering with its tally, and the
%% arbiter's last tally ends the run. A smoker tells the arbiter at once, then smokes
%% (busy_work, as ours, in place of Savina's busy-wait). Differences as ours (the synthetic work,
%% the tallies).
savina_cigsmok(Rounds, Smokers, Seed0) ->
    Seed = case Seed0 of 0 -> Rounds * Smokers; _ -> Seed0 end,
    Self = self(),
    Start = now_ns(),
    Arbiter = spawn(fun() -> cs_arbiter(Self, Rounds, Smokers, Seed) end),
    Arbiter ! start,
    receive {cs_done, End, Started, Tallies, Handled} -> ok end,
    {Plan, Units, WorkSum} = cs_model(Rounds, Smokers, Seed),
    Smokes = [S || {_, S, _, _, _, _} <- Tallies],
    Counts = lists:foldl(fun({I, S, _, _, _, _}, M) -> maps:put(I, S, M) end, #{}, Tallies),
    Hash = lists:foldl(fun(I, H) -> fnv(H, maps:get(I, Counts, 0)) end, ?FNV_BASIS, lists:seq(0, Smokers - 1)),
    Uneven = length([I || {I, Want} <- lists:zip(lists:seq(0, Smokers - 1), Plan), maps:get(I, Counts, 0) =/= Want]),
    Answer = cs_answer(length(Tallies), lists:sum(Smokes) + lie(), Uneven, Hash,
                       lists:sum([U || {_, _, _, U, _, _} <- Tallies]),
                       lists:foldl(fun({_, _, _, _, W, _}, Sum) -> (Sum + W) band ?M64 end, 0, Tallies),
                       {1, lists:sum(Smokes), Started, lists:sum([E || {_, _, E, _, _, _} <- Tallies]), length(Tallies)}),
    Expected = cs_answer(Smokers, Rounds, 0, lists:foldl(fun(C, H) -> fnv(H, C) end, ?FNV_BASIS, Plan),
                         Units, WorkSum, {1, Rounds, Rounds, Smokers, Smokers}),
    {End - Start, 1 + Started + length(Tallies) + Handled, Answer, Expected, #{}}.

cs_answer(Reported, Smokes, Uneven, Hash, Units, WorkSum, {Start, StartSmoking, Started, Exit, Tally}) ->
    lists:flatten(io_lib:format("smokers_reported=~b smokes=~b uneven_smokers=~b smokes_hash=~s work_units=~b "
                                "work_sum=~b start=~b start_smoking=~b started_smoking=~b exit=~b tally=~b",
                                [Reported, Smokes, Uneven, hex16(Hash), Units, WorkSum, Start, StartSmoking,
                                 Started, Exit, Tally])).

%% A round's pick, as cigsmok.cpp's draw: the smoker, then its spell of work.
cs_pick(Random0, Smokers) ->
    Random1 = big_next(Random0),
    Random2 = big_next(Random1),
    {Random1 rem Smokers, Random2 rem 1000 + 10, Random2}.

cs_arbiter(Main, Rounds, Smokers, Seed) ->
    Self = self(),
    All = list_to_tuple([spawn(fun() -> cs_smoker(Self, I, 0, 0, 0, 0) end) || I <- lists:seq(0, Smokers - 1)]),
    receive start -> ok end,
    Started = cs_rounds(All, Smokers, Rounds, cs_notify(All, Smokers, Seed), 0),
    [S ! exit || S <- tuple_to_list(All)],
    Tallies = [receive {tally, I, S, E, U, W, H} -> {I, S, E, U, W, H} end || _ <- lists:seq(1, Smokers)],
    Main ! {cs_done, now_ns(), Started, Tallies, lists:sum([H || {_, _, _, _, _, H} <- Tallies])}.

cs_notify(All, Smokers, Random) ->
    {Smoker, Work, Next} = cs_pick(Random, Smokers),
    element(Smoker + 1, All) ! {start_smoking, Work},
    Next.

%% The StartedSmokings, each starting the next round until `rounds`.
cs_rounds(All, Smokers, Rounds, Random, Started) ->
    receive
        started_smoking when Started + 1 >= Rounds -> Started + 1;
        started_smoking -> cs_rounds(All, Smokers, Rounds, cs_notify(All, Smokers, Random), Started + 1)
    end.

cs_smoker(Arbiter, I, Smokes, Units, WorkSum, Handled) ->
    receive
        {start_smoking, Work} ->
            Arbiter ! started_smoking,  % the ingredients are off the table
            cs_smoker(Arbiter, I, Smokes + 1, Units + Work, (WorkSum + busy_work(Work)) band ?M64, Handled + 1);
        exit ->
            Arbiter ! {tally, I, Smokes, 1, Units, WorkSum, Handled + 1}
    end.

%% The picks replayed: each smoker's smokes (in smoker order), the work units and their sum. A
%% spell's last state depends on its length alone: each length is worked out once.
cs_model(Rounds, Smokers, Seed) ->
    Counts = atomics:new(Smokers, [{signed, false}]),
    {Units, Sum} = cs_replay(Counts, Smokers, Rounds, Seed, 0, 0, #{}),
    {[atomics:get(Counts, I) || I <- lists:seq(1, Smokers)], Units, Sum}.

cs_replay(_, _, 0, _, Units, Sum, _) -> {Units, Sum};
cs_replay(Counts, Smokers, Left, Random, Units, Sum, Known) ->
    {Smoker, Work, Next} = cs_pick(Random, Smokers),
    atomics:add(Counts, Smoker + 1, 1),
    {Spell, Known1} = case Known of
                          #{Work := S} -> {S, Known};
                          _ -> S = busy_work_plain(Work), {S, Known#{Work => S}}
                      end,
    cs_replay(Counts, Smokers, Left - 1, Next, Units + Work, (Sum + Spell) band ?M64, Known1).

%% savina_bndbuffer (10. Producer-Consumer with Bounded Buffer): the manager, spawned under the
%% clock, spawns the consumers (every one free) and the producers when it starts and tells each
%% producer to produce (as Savina's). A producer makes each item (Savina's processItem) and sends
%% it to the manager, which hands it to the first free consumer or keeps it in its buffer (a
%% queue), and tells the producer to produce again unless the buffer holds buffer_size -
%% producers items or more (then the producer waits for room). A consumer works on each item and
%% tells the manager it is free. Once every producer has exited and every consumer is free the
%% manager tells the consumers to exit; the last consumer to handle its Exit ends the run (each
%% reads the clock there). Each item's consumption is counted in an atomics array (ours: an array
%% of atomic counters). Differences as ours (producers and consumers named by index, items
%% carrying their sequence number); the synthetic work's values are not in the answer.
-record(bb, {main, producers, consumers, size, adjusted, available, free = 0, pending, buffered = 0,
             parked, exited = 0, handled = 0, over = 0}).

savina_bndbuffer(BufferSize, Producers, Consumers, Items, ProduceCost, ConsumeCost) ->
    Self = self(),
    Consumed = atomics:new(max(Producers * Items, 1), [{signed, false}]),
    Start = now_ns(),
    spawn(fun() -> bb_manager(Self, BufferSize, Producers, Consumers, Items, {ProduceCost, ConsumeCost, Consumed}) end),
    receive {bb_manager, ManagerHandled, OverBuffer} -> ok end,
    Made = [receive {bb_producer, _, Produced, H, _} -> {Produced, H} end || _ <- lists:seq(1, Producers)],
    Used = [receive {bb_consumer, _, H, _, At} -> {H, At} end || _ <- lists:seq(1, Consumers)],
    End = lists:max([At || {_, At} <- Used]),
    Times = [atomics:get(Consumed, I) || I <- lists:seq(1, Producers * Items)],
    Answer = bb_answer(lists:sum([P || {P, _} <- Made]) + lie(), lists:sum(Times), length([x || 1 <- Times]),
                       length([x || {P, _} <- Made, P =/= Items]), OverBuffer),
    Total = Producers * Items,
    {End - Start, ManagerHandled + lists:sum([H || {_, H} <- Made]) + lists:sum([H || {H, _} <- Used]),
     Answer, bb_answer(Total, Total, Total, 0, 0), #{}}.

bb_answer(Produced, Consumed, Once, Short, Over) ->
    lists:flatten(io_lib:format("produced=~b consumed=~b consumed_once=~b short_producers=~b over_buffer=~b",
                                [Produced, Consumed, Once, Short, Over])).

%% Savina's processItem: cost x 100 logarithms of its PseudoRandom's doubles (one with cost 0),
%% the generator seeded with the cost; math:log is C's log, as ours.
bb_process(Current, 0) -> Current + bb_log(big_next(0));
bb_process(Current, Cost) -> bb_logs(Current, Cost, Cost * 100).

bb_logs(Result, _, 0) -> Result;
bb_logs(Result, Random, Left) ->
    Next = big_next(Random),
    bb_logs(Result + bb_log(Next), Next, Left - 1).

bb_log(Random) -> math:log(abs(1.0 / (Random + 1)) + 0.01).  % Savina's nextDouble is 1 / (value + 1)

bb_manager(Main, BufferSize, Producers, Consumers, Items, {ProduceCost, ConsumeCost, Consumed}) ->
    Self = self(),
    ConsumerPids = list_to_tuple([spawn(fun() -> bb_consumer(Main, Self, I, {Producers, Items, ConsumeCost, Consumed}, 0.0, 0) end)
                                  || I <- lists:seq(0, Consumers - 1)]),
    ProducerPids = list_to_tuple([spawn(fun() -> bb_producer(Main, Self, I, Items, ProduceCost, 0.0, 0, 0) end)
                                  || I <- lists:seq(0, Producers - 1)]),
    [P ! produce || P <- tuple_to_list(ProducerPids)],
    bb_manage(#bb{main = Main, producers = ProducerPids, consumers = ConsumerPids, size = BufferSize,
                  adjusted = BufferSize - Producers,  % Savina's: room for an item from each producer in flight
                  available = queue:from_list(lists:seq(0, Consumers - 1)), free = Consumers,
                  pending = queue:new(), parked = queue:new()}).

bb_manage(#bb{} = S0) ->
    receive
        {data, Producer, _, _} = Data ->
            S1 = case S0#bb.free of
                     0 ->
                         Buffered = S0#bb.buffered + 1,
                         S0#bb{pending = queue:in(Data, S0#bb.pending), buffered = Buffered,
                               over = S0#bb.over + if Buffered > S0#bb.size -> 1; true -> 0 end};
                     Free ->
                         {{value, Consumer}, Available} = queue:out(S0#bb.available),
                         element(Consumer + 1, S0#bb.consumers) ! Data,
                         S0#bb{available = Available, free = Free - 1}
                 end,
            S2 = case S1#bb.buffered >= S1#bb.adjusted of
                     true -> S1#bb{parked = queue:in(Producer, S1#bb.parked)};
                     false -> element(Producer + 1, S1#bb.producers) ! produce, S1
                 end,
            bb_manage(S2#bb{handled = S2#bb.handled + 1});
        {available, Consumer} when S0#bb.buffered =:= 0 ->
            bb_try_exit(S0#bb{available = queue:in(Consumer, S0#bb.available), free = S0#bb.free + 1,
                              handled = S0#bb.handled + 1});
        {available, Consumer} ->
            {{value, Data}, Pending} = queue:out(S0#bb.pending),
            element(Consumer + 1, S0#bb.consumers) ! Data,
            Parked = case queue:out(S0#bb.parked) of
                         {{value, Producer}, Rest} -> element(Producer + 1, S0#bb.producers) ! produce, Rest;
                         {empty, Rest} -> Rest
                     end,
            bb_manage(S0#bb{pending = Pending, buffered = S0#bb.buffered - 1, parked = Parked,
                            handled = S0#bb.handled + 1});
        producer_exit ->
            bb_try_exit(S0#bb{exited = S0#bb.exited + 1, handled = S0#bb.handled + 1})
    end.

%% Savina's manager exits once every producer has and every consumer is free, telling the
%% consumers to exit.
bb_try_exit(#bb{exited = Exited, free = Free, producers = P, consumers = C} = S)
  when Exited =:= tuple_size(P), Free =:= tuple_size(C) ->
    [Consumer ! consumer_exit || Consumer <- tuple_to_list(C)],
    S#bb.main ! {bb_manager, S#bb.handled, S#bb.over};
bb_try_exit(S) -> bb_manage(S).

bb_producer(Main, Manager, I, Items, Cost, Item, Produced, Handled) ->
    receive
        produce when Produced =:= Items ->
            Manager ! producer_exit,
            Main ! {bb_producer, I, Produced, Handled + 1, Item};
        produce ->
            Next = bb_process(Item, Cost),
            Manager ! {data, I, Produced, Next},
            bb_producer(Main, Manager, I, Items, Cost, Next, Produced + 1, Handled + 1)
    end.

bb_consumer(Main, Manager, I, {Producers, Items, Cost, Consumed} = Setup, Item, Handled) ->
    receive
        {data, Producer, Seq, Value} ->
            Next = bb_process(Item + Value, Cost),
            Producer >= 0 andalso Producer < Producers andalso Seq >= 0 andalso Seq < Items
                andalso atomics:add(Consumed, Producer * Items + Seq + 1, 1),
            Manager ! {available, I},
            bb_consumer(Main, Manager, I, Setup, Next, Handled + 1);
        consumer_exit ->
            Main ! {bb_consumer, I, Handled + 1, Item, now_ns()}
    end.

%% savina_philosopher (11. Dining Philosophers): this process spawns the arbitrator and the
%% `philosophers` philosophers and sends each Start, as Savina's runIteration; a started or
%% denied philosopher sends the arbitrator Hungry (carrying its pid and index, as Savina's
%% HungryMessage), which answers Eat, taking both forks, if both are free, else Denied; a
%% philosopher that ate sends Done, then Start to itself until it has eaten `rounds` times, when
%% it sends the arbitrator Exit and ends, reporting its tally to this process (not counted). The
%% arbitrator's last Exit ends the run. As ours (philosopher.cpp): each fork records its holder
%% (an atomics array, as ours a vector), each grant and release is checked against it, and the
%% answer is the same on every schedule; the denials, which the schedule decides, are the
%% metric, not in the answer. Differences as ours (no shared AtomicLong of running denial counts
%% added at each meal; the holder checks).
-record(ph, {handled = 0, denials = 0, meals = 0, conflicts = 0, wrong_releases = 0, left_held = 0, exits = 0}).

savina_philosopher(Philosophers, Rounds) ->
    Self = self(),
    Start = now_ns(),
    Arbitrator = spawn(fun() -> ph_arbitrator(Self, Philosophers) end),
    Pids = [spawn(fun() -> ph_philosopher(Self, {hungry, self(), I}, {done, I}, Arbitrator, Rounds, 0, 0, 0) end)
            || I <- lists:seq(0, Philosophers - 1)],
    [P ! start || P <- Pids],
    receive {ph_done, End, #ph{} = Outcome, Meals} -> ok end,
    Tallies = [receive {ph_tally, I, E, D, H} -> {I, E, D, H} end || _ <- Pids],
    Eaten = lists:sum([E || {_, E, _, _} <- Tallies]),
    Denied = lists:sum([D || {_, _, D, _} <- Tallies]),
    ByIndex = maps:from_list([{I, E} || {I, E, _, _} <- Tallies]),
    Uneven = length([I || {I, Granted} <- lists:zip(lists:seq(0, Philosophers - 1), Meals),
                          Granted =/= Rounds orelse maps:get(I, ByIndex, 0) =/= Rounds]),
    Answer = ph_answer(Philosophers, case Eaten =:= Outcome#ph.meals of true -> Eaten + lie(); false -> 0 end,
                       Uneven, Outcome#ph.conflicts, Outcome#ph.wrong_releases, Outcome#ph.left_held,
                       abs(Denied - Outcome#ph.denials)),
    {End - Start, Outcome#ph.handled + lists:sum([H || {_, _, _, H} <- Tallies]), Answer,
     ph_answer(Philosophers, Philosophers * Rounds, 0, 0, 0, 0, 0), #{<<"denials">> => Outcome#ph.denials}}.

ph_answer(Philosophers, Meals, Uneven, Conflicts, WrongReleases, LeftHeld, LostDenials) ->
    lists:flatten(io_lib:format("philosophers=~b meals=~b uneven_philosophers=~b fork_conflicts=~b "
                                "wrong_releases=~b forks_left_held=~b lost_denials=~b",
                                [Philosophers, Meals, Uneven, Conflicts, WrongReleases, LeftHeld, LostDenials])).

%% Fork i's holder in `holders` (index i + 1): 0 while free, else the holder's index + 1.
ph_arbitrator(Main, N) ->
    ph_arbitrate(Main, N, atomics:new(N, [{signed, false}]), atomics:new(N, [{signed, false}]), #ph{}).

ph_arbitrate(Main, N, Holders, Meals, #ph{handled = Handled} = S) ->
    receive
        {hungry, Pid, Id} ->
            Left = Id + 1, Right = (Id + 1) rem N + 1,
            case atomics:get(Holders, Left) =/= 0 orelse atomics:get(Holders, Right) =/= 0 of
                true ->
                    Pid ! denied,
                    ph_arbitrate(Main, N, Holders, Meals, S#ph{handled = Handled + 1, denials = S#ph.denials + 1});
                false ->
                    %% Checked beside the rule that ensures it: neither neighbour eats.
                    Before = (Id + N - 1) rem N,
                    Conflict = N > 1 andalso (atomics:get(Holders, Before + 1) =:= Before + 1
                                              orelse atomics:get(Holders, Right) =:= Right),
                    atomics:put(Holders, Left, Id + 1),
                    atomics:put(Holders, Right, Id + 1),
                    atomics:add(Meals, Id + 1, 1),
                    Pid ! eat,
                    ph_arbitrate(Main, N, Holders, Meals,
                                 S#ph{handled = Handled + 1, meals = S#ph.meals + 1,
                                      conflicts = S#ph.conflicts + case Conflict of true -> 1; false -> 0 end})
            end;
        {done, Id} ->
            Left = Id + 1, Right = (Id + 1) rem N + 1,
            Wrong = atomics:get(Holders, Left) =/= Id + 1 orelse atomics:get(Holders, Right) =/= Id + 1,
            atomics:put(Holders, Left, 0),
            atomics:put(Holders, Right, 0),
            ph_arbitrate(Main, N, Holders, Meals,
                         S#ph{handled = Handled + 1,
                              wrong_releases = S#ph.wrong_releases + case Wrong of true -> 1; false -> 0 end});
        {exit, _} when S#ph.exits + 1 =:= N ->
            End = now_ns(),
            Held = length([x || I <- lists:seq(1, N), atomics:get(Holders, I) =/= 0]),
            Main ! {ph_done, End, S#ph{handled = Handled + 1, exits = N, left_held = Held},
                    [atomics:get(Meals, I) || I <- lists:seq(1, N)]};
        {exit, _} ->
            ph_arbitrate(Main, N, Holders, Meals, S#ph{handled = Handled + 1, exits = S#ph.exits + 1})
    end.

%% Hungry and Done made once, as Savina's philosopher makes its myHungryMessage and myDoneMessage.
ph_philosopher(Main, Hungry, Done, Arbitrator, Rounds, Eaten, Denied, Handled) ->
    receive
        start ->
            Arbitrator ! Hungry,
            ph_philosopher(Main, Hungry, Done, Arbitrator, Rounds, Eaten, Denied, Handled + 1);
        denied ->
            Arbitrator ! Hungry,
            ph_philosopher(Main, Hungry, Done, Arbitrator, Rounds, Eaten, Denied + 1, Handled + 1);
        eat when Eaten + 1 < Rounds ->
            Arbitrator ! Done,
            self() ! start,
            ph_philosopher(Main, Hungry, Done, Arbitrator, Rounds, Eaten + 1, Denied, Handled + 1);
        eat ->
            {hungry, _, Id} = Hungry,
            Arbitrator ! Done,
            Arbitrator ! {exit, Id},
            Main ! {ph_tally, Id, Eaten + 1, Denied, Handled + 1}
    end.

%% savina_barber (12. Sleeping Barber): this process spawns the barber, the waiting room and the
%% customer factory under the clock and sends the factory Start (Savina's runIteration). On Start
%% the factory spawns `haircuts` customer processes, sending each into the room (Enter) and
%% working draw(production_rate) units after each; the room turns a customer away (Full) when
%% its `seats` seats are taken, and the customer asks the factory to send it again (Returned);
%% otherwise it queues it and wakes a sleeping barber (Next to itself) or tells the customer to
%% wait (Wait); on Next it sends the first waiting customer to the barber (Enter, with the room,
%% as Savina's) or lets the barber sleep. The barber sends the customer StartCut, works
%% draw(haircut_rate) units, sends DoneCut and Next to the room; the customer answers DoneCut
%% with its Done (its counts) to the factory and ends (Savina's exit()). After the last Done the
%% factory sends the room Exit with its counts and ends; the room, once the barber sleeps, hands
%% every count to the barber in its Exit and ends; the barber's Exit ends the run. A spell is
%% Savina's PseudoRandom (seeded with `seed`, one per factory and barber, as Savina's) drawn as
%% nextInt(rate) + 10, worked as random.hpp's busy_work (in small-integer limbs), the units and
%% the last states summed. As ours (barber.cpp), the answer is the same on every schedule, the
%% customers turned away and the barber's wakes (the schedule's) are the metrics, and every
%% message is accounted for by kind. Differences as ours (no Wait to the barber when it sleeps;
%% Exit forwarded once the barber sleeps; the customers' counts in their Done; ids are ordinals).
savina_barber(Haircuts, Seats, ProductionRate, HaircutRate, Seed) ->
    Self = self(),
    Start = now_ns(),
    Barber = spawn(fun() -> bs_barber(Self, HaircutRate, Seed, 0, 0, 0) end),
    Room = spawn(fun() -> bs_room(Barber, Seats, queue:new(), 0, true, false, #{enters => 0, full => 0, wakes => 0,
                                                                                  waits => 0, nexts => 0, to_barber => 0}) end),
    Factory = spawn(fun() -> bs_factory(Room, Haircuts, ProductionRate, Seed) end),
    Factory ! start,
    receive {bs_done, End, Counts} -> ok end,
    #{enters := Enters, full := Full, wakes := Wakes, nexts := Nexts, customer_fulls := Fulls, returned := Returned,
      customer_waits := Waits, haircuts := Cut, customer_starts := Starts, customer_dones := Dones,
      served := Served} = Counts,
    {FactoryUnits, FactorySum} = bs_model(Haircuts, ProductionRate, Seed),
    {BarberUnits, BarberSum} = bs_model(Haircuts, HaircutRate, Seed),
    {End - Start, 1 + Enters + Fulls + Returned + Nexts + Waits + Cut + Starts + Dones + Served + 2,
     bs_answer(Counts#{served := Served + lie()}, bs_errors(Counts)),
     bs_answer(#{customers => Haircuts, haircuts => Haircuts, served => Haircuts, served_wrong => 0, repeated => 0,
                 factory_units => FactoryUnits, factory_sum => FactorySum, barber_units => BarberUnits,
                 barber_sum => BarberSum}, 0),
     #{<<"attempts">> => Enters, <<"turned_away">> => Full, <<"barber_wakes">> => Wakes}}.

bs_answer(#{customers := Customers, haircuts := Cut, served := Served, served_wrong := Wrong, repeated := Repeated,
            factory_units := FactoryUnits, factory_sum := FactorySum, barber_units := BarberUnits,
            barber_sum := BarberSum}, Errors) ->
    lists:flatten(io_lib:format("customers=~b haircuts=~b served=~b served_wrong=~b repeated=~b accounting_errors=~b "
                                "factory_work_units=~b factory_work_sum=~b barber_work_units=~b barber_work_sum=~b",
                                [Customers, Cut, Served, Wrong, Repeated, Errors, FactoryUnits, FactorySum,
                                 BarberUnits, BarberSum])).

%% barber.cpp's accounting_errors: every schedule's invariants. Each Enter turned away, woke the
%% barber or waited; every turned-away customer came back; every accepted customer was cut; each
%% Next either sent a customer to the barber or found the room empty after a wake.
bs_errors(#{enters := Enters, customers := Customers, returned := Returned, full := Full, customer_fulls := Fulls,
            wakes := Wakes, waits := Waits, customer_waits := CustomerWaits, to_barber := ToBarber,
            haircuts := Cut, nexts := Nexts, customer_starts := Starts, customer_dones := Dones}) ->
    length([x || false <- [Enters =:= Customers + Returned, Full =:= Returned andalso Fulls =:= Returned,
                           Enters - Full =:= Wakes + Waits, CustomerWaits =:= Waits,
                           ToBarber =:= Cut andalso Nexts =:= Wakes + Cut, Starts =:= Cut andalso Dones =:= Cut]]).

%% A spell of work: Savina's nextInt(rate) + 10, and the generator's next value.
bs_draw(Random0, Rate) ->
    Random = big_next(Random0),
    {Random rem Rate + 10, Random}.

%% `n` spells drawn from a PseudoRandom seeded with `seed`: their units and last states summed
%% (barber.cpp's model_work). A spell's last state depends on its length alone: each is worked out once.
bs_model(N, Rate, Seed) -> bs_model(N, Rate, Seed, 0, 0, #{}).

bs_model(0, _, _, Units, Sum, _) -> {Units, Sum};
bs_model(Left, Rate, Random, Units, Sum, Known) ->
    {Work, Next} = bs_draw(Random, Rate),
    {Spell, Known1} = case Known of
                          #{Work := S} -> {S, Known};
                          _ -> S = busy_work_plain(Work), {S, Known#{Work => S}}
                      end,
    bs_model(Left - 1, Rate, Next, Units + Work, (Sum + Spell) band ?M64, Known1).

bs_factory(Room, Haircuts, Rate, Seed) ->
    receive start -> ok end,
    Self = self(),
    {Units, Sum} = bs_produce(Self, Room, Rate, Seed, 0, Haircuts, 0, 0),
    bs_serve(Room, Haircuts, atomics:new(Haircuts, [{signed, false}]),
             #{customers => Haircuts, returned => 0, served => 0, served_wrong => 0, repeated => 0,
               factory_units => Units, factory_sum => Sum, customer_starts => 0, customer_dones => 0,
               customer_fulls => 0, customer_waits => 0}).

bs_produce(_, _, _, _, Id, Id, Units, Sum) -> {Units, Sum};
bs_produce(Factory, Room, Rate, Random, Id, Haircuts, Units, Sum) ->
    Customer = spawn(fun() -> bs_customer(Factory, Id, 0, 0, 0, 0) end),
    Room ! {enter, Customer},
    {Work, Next} = bs_draw(Random, Rate),
    bs_produce(Factory, Room, Rate, Next, Id + 1, Haircuts, Units + Work, (Sum + busy_work(Work)) band ?M64).

bs_serve(Room, Haircuts, Seen, #{returned := Returned, served := Served} = C) ->
    receive
        {returned, Customer} ->
            Room ! {enter, Customer},
            bs_serve(Room, Haircuts, Seen, C#{returned := Returned + 1});
        {customer_done, Id, Starts, Dones, Fulls, Waits} ->
            Repeated = Id < 0 orelse Id >= Haircuts orelse atomics:add_get(Seen, Id + 1, 1) > 1,
            #{served_wrong := Wrong, repeated := Repeats, customer_starts := S, customer_dones := D,
              customer_fulls := F, customer_waits := W} = C,
            C1 = C#{served := Served + 1, repeated := Repeats + case Repeated of true -> 1; false -> 0 end,
                    served_wrong := Wrong + case {Starts, Dones} of {1, 1} -> 0; _ -> 1 end,
                    customer_starts := S + Starts, customer_dones := D + Dones, customer_fulls := F + Fulls,
                    customer_waits := W + Waits},
            case Served + 1 of
                Haircuts -> Room ! {exit_room, C1};
                _ -> bs_serve(Room, Haircuts, Seen, C1)
            end
    end.

bs_customer(Factory, Id, Starts, Dones, Fulls, Waits) ->
    receive
        full ->
            Factory ! {returned, self()},
            bs_customer(Factory, Id, Starts, Dones, Fulls + 1, Waits);
        wait -> bs_customer(Factory, Id, Starts, Dones, Fulls, Waits + 1);
        start_cut -> bs_customer(Factory, Id, Starts + 1, Dones, Fulls, Waits);
        done_cut -> Factory ! {customer_done, Id, Starts, Dones + 1, Fulls, Waits}
    end.

bs_room(Barber, Seats, Waiting, Seated, Asleep, Exiting, #{enters := Enters} = C) ->
    receive
        {enter, Customer} when Seated =:= Seats ->
            Customer ! full,
            bs_room(Barber, Seats, Waiting, Seated, Asleep, Exiting, C#{enters := Enters + 1, full := maps:get(full, C) + 1});
        {enter, Customer} when Asleep ->
            self() ! next,
            bs_room(Barber, Seats, queue:in(Customer, Waiting), Seated + 1, false, Exiting,
                    C#{enters := Enters + 1, wakes := maps:get(wakes, C) + 1});
        {enter, Customer} ->
            Customer ! wait,
            bs_room(Barber, Seats, queue:in(Customer, Waiting), Seated + 1, Asleep, Exiting,
                    C#{enters := Enters + 1, waits := maps:get(waits, C) + 1});
        next ->
            C1 = C#{nexts := maps:get(nexts, C) + 1},
            case queue:out(Waiting) of
                {{value, Customer}, Rest} ->
                    Barber ! {enter, Customer, self()},
                    bs_room(Barber, Seats, Rest, Seated - 1, Asleep, Exiting, C1#{to_barber := maps:get(to_barber, C) + 1});
                {empty, _} when Exiting =/= false ->
                    Barber ! {exit_barber, maps:merge(Exiting, C1)};  % Savina also sends the barber a Wait, which it ignores
                {empty, _} ->
                    bs_room(Barber, Seats, Waiting, Seated, true, Exiting, C1)
            end;
        %% Every customer is served, but the barber's last Next may still be on its way: the
        %% room's counts are final once the barber sleeps.
        {exit_room, Factory} when Asleep -> Barber ! {exit_barber, maps:merge(Factory, C)};
        {exit_room, Factory} -> bs_room(Barber, Seats, Waiting, Seated, Asleep, Factory, C)
    end.

bs_barber(Main, Rate, Random, Cut, Units, Sum) ->
    receive
        {enter, Customer, Room} ->
            Customer ! start_cut,
            {Work, Next} = bs_draw(Random, Rate),
            Spell = busy_work(Work),
            Customer ! done_cut,
            Room ! next,
            bs_barber(Main, Rate, Next, Cut + 1, Units + Work, (Sum + Spell) band ?M64);
        {exit_barber, Counts} ->
            Main ! {bs_done, now_ns(), Counts#{haircuts => Cut, barber_units => Units, barber_sum => Sum}}
    end.

%% savina_concdict (8. Concurrent Dictionary) and savina_concsll (9. Concurrent Sorted Linked
%% List): workers, a master and one server process. This process spawns the server under the
%% clock and then the master, which spawns each worker and sends it DoWork (Savina's master in
%% its onPostStart); on DoWork and on each Reply a worker sends its next request, one outstanding
%% at a time, and after `messages_per_worker` tells the master it is done with its count of
%% replies; the master, once every worker is done, tells the server to end, whose answer ends
%% the run.
savina_served(Workers, Messages, Server, Request, Seeds) ->
    Self = self(),
    Master = spawn(fun() -> sv_master(Self, Server, Workers, Messages, Request, Seeds) end),
    receive {sv_done, End, Answer, ServerHandled} -> ok end,
    receive {sv_master, Master, MasterHandled} -> ok end,
    WorkersHandled = lists:sum([receive {sv_worker, _, H} -> H end || _ <- lists:seq(1, Workers)]),
    {End, Answer, ServerHandled + MasterHandled + WorkersHandled}.

sv_master(Main, Server, Workers, Messages, Request, Seeds) ->
    Self = self(),
    [spawn(fun() -> sv_worker(Main, Self, Server, I, Messages, Request, Seeds(I), 0, 0) end) ! do_work
     || I <- lists:seq(0, Workers - 1)],
    sv_ends(Main, Server, Workers, 0, 0).

sv_ends(Main, Server, Workers, Workers, Replies) ->
    Server ! {end_work, Replies},
    Main ! {sv_master, self(), Workers};
sv_ends(Main, Server, Workers, Ended, Replies) ->
    receive {end_work, R} -> sv_ends(Main, Server, Workers, Ended + 1, Replies + R) end.

sv_worker(Main, Master, Server, I, Left, Request, State, Replies, Handled) ->
    Replied = receive do_work -> 0; {reply, _} -> 1 end,
    case Left of
        0 ->
            Master ! {end_work, Replies + Replied},
            Main ! {sv_worker, I, Handled + 1};
        _ ->
            {Message, Next} = Request(State, self()),
            Server ! Message,
            sv_worker(Main, Master, Server, I, Left - 1, Request, Next, Replies + Replied, Handled + 1)
    end.

%% savina_concdict: the dictionary an Erlang map, the initial {k: k} made before the clock (as
%% Savina fills its map while parsing its arguments) and copied into the dictionary's heap when
%% it is spawned, under the clock (as Savina's dictionary copies it when made). Differences as
%% ours (each worker's SplitMix64 stream, its own keys to write, 32-bit keys and values); the
%% kernel's process spawns the dictionary, where Savina's master does (so that the map is copied
%% once, not into the master and again into the dictionary); the phase ends where the dictionary
%% handles End, before its digest of the final contents, where ours digests inside the phase: a
%% digest's entry costs a SplitMix64 finalizer, bignum arithmetic here, so that at the default
%% 524,287 keys the digest took 470-560 ms (on a loaded 2-core machine), more than the rest of
%% the phase, against 2-11 ms for ours' (the same digest of a std::unordered_map in C++, timed
%% apart on the same machine). Savina's dictionary only prints its size.
savina_concdict(Workers, Messages, WritePercent, Keys, Seed) ->
    Initial = maps:from_list([{K, K} || K <- lists:seq(0, Keys - 1)]),
    Self = self(),
    Start = now_ns(),
    Dictionary = spawn(fun() -> cd_dictionary(Self, Initial, 0, 0, 0) end),
    Request = fun(State, Worker) -> cd_request(State, Worker, Workers, WritePercent, Keys) end,
    Seeds = fun(I) -> {splitmix(Seed, I), I, (Keys - I + Workers - 1) div Workers} end,
    {End, Answer, Handled} = savina_served(Workers, Messages, Dictionary, Request, Seeds),
    {End - Start, Handled, Answer, cd_model(Workers, Messages, WritePercent, Keys, Seed), #{}}.

cd_answer(Reads, Writes, Replies, Size, Digest) ->
    lists:flatten(io_lib:format("reads=~b writes=~b replies=~b size=~b digest=~b", [Reads, Writes, Replies, Size, Digest])).

%% concdict.cpp's Generator: worker w writes only keys k with k rem workers == w.
cd_request({State0, Worker, OwnKeys}, Self, Workers, WritePercent, Keys) ->
    {Draw, State1} = splitmix_next(State0),
    case Draw rem 100 < WritePercent of
        true ->
            {Key, State2} = splitmix_next(State1),
            {Value, State3} = splitmix_next(State2),
            {{write, Self, Worker + Workers * (Key rem OwnKeys), Value bsr 32}, {State3, Worker, OwnKeys}};
        false ->
            {Key, State2} = splitmix_next(State1),
            {{read, Self, Key rem Keys}, {State2, Worker, OwnKeys}}
    end.

cd_entry(Key, Value) -> mix64((Key bsl 32) bor Value).

cd_dictionary(Main, Data, Reads, Writes, Handled) ->
    receive
        {write, Worker, Key, Value} ->
            Worker ! {reply, Value},
            cd_dictionary(Main, Data#{Key => Value}, Reads, Writes + 1, Handled + 1);
        {read, Worker, Key} ->
            Worker ! {reply, maps:get(Key, Data, 0)},  % 0 where absent, as ours
            cd_dictionary(Main, Data, Reads + 1, Writes, Handled + 1);
        {end_work, Replies} ->
            End = now_ns(),  % before the digest: see savina_concdict
            Digest = maps:fold(fun(K, V, D) -> (D + cd_entry(K, V)) band ?M64 end, 0, Data),
            Main ! {sv_done, End, cd_answer(Reads, Writes + lie(), Replies, map_size(Data), Digest), Handled + 1}
    end.

%% Each worker's operations replayed in turn on {k: k}.
cd_model(Workers, Messages, WritePercent, Keys, Seed) ->
    {Reads, Writes, Written} =
        lists:foldl(fun(W, Acc) -> cd_replay({splitmix(Seed, W), W, (Keys - W + Workers - 1) div Workers},
                                             Messages, Workers, WritePercent, Keys, Acc) end,
                    {0, 0, #{}}, lists:seq(0, Workers - 1)),
    Initial = lists:foldl(fun(K, D) -> case maps:is_key(K, Written) of true -> D; false -> (D + cd_entry(K, K)) band ?M64 end end,
                          0, lists:seq(0, Keys - 1)),
    Digest = maps:fold(fun(K, V, D) -> (D + cd_entry(K, V)) band ?M64 end, Initial, Written),
    cd_answer(Reads, Writes, Reads + Writes, Keys, Digest).

cd_replay(_, 0, _, _, _, Acc) -> Acc;
cd_replay(State, Left, Workers, WritePercent, Keys, {Reads, Writes, Written}) ->
    case cd_request(State, self(), Workers, WritePercent, Keys) of
        {{write, _, Key, Value}, Next} -> cd_replay(Next, Left - 1, Workers, WritePercent, Keys, {Reads, Writes + 1, Written#{Key => Value}});
        {{read, _, _}, Next} -> cd_replay(Next, Left - 1, Workers, WritePercent, Keys, {Reads + 1, Writes, Written})
    end.

%% savina_concsll: the list an Erlang list kept sorted: an insert after the last element not
%% greater than it (Savina's SortedLinkedList's), which copies the cells before it, the list
%% being immutable, where Savina's links one node in; a membership test walking until it finds
%% the value (lists:member) and a size that walks it all (length), both in the VM's C. On End it
%% walks its list (length, order, digest). Differences as ours (each worker's SplitMix64 stream,
%% 32-bit values).
savina_concsll(Workers, Messages, WritePercent, SizePercent, Seed) ->
    Self = self(),
    Start = now_ns(),
    List = spawn(fun() -> sl_list(Self, [], {0, 0, 0}, 0) end),
    Request = fun(State, Worker) -> sl_request(State, Worker, WritePercent, SizePercent) end,
    {End, Answer, Handled} = savina_served(Workers, Messages, List, Request, fun(I) -> splitmix(Seed, I) end),
    {End - Start, Handled, Answer, sl_model(Workers, Messages, WritePercent, SizePercent, Seed), #{}}.

sl_answer({Contains, Writes, Sizes}, Replies, Values) ->
    {Length, Unsorted, Digest} = sl_walk(Values, 0, 0, 0),
    lists:flatten(io_lib:format("contains=~b writes=~b sizes=~b replies=~b length=~b unsorted=~b digest=~b",
                                [Contains, Writes, Sizes, Replies, Length, Unsorted, Digest])).

%% concsll.cpp's next_operation: a draw below 100; under size_percent a size query, under
%% size_percent + write_percent an insert, else a membership test.
sl_request(State0, Self, WritePercent, SizePercent) ->
    {Draw, State1} = splitmix_next(State0),
    case Draw rem 100 of
        D when D < SizePercent -> {{size, Self}, State1};
        D when D < SizePercent + WritePercent -> {Value, State2} = splitmix_next(State1), {{write, Self, Value bsr 32}, State2};
        _ -> {Value, State2} = splitmix_next(State1), {{contains, Self, Value bsr 32}, State2}
    end.

sl_insert(Value, [Head | Tail]) when not (Value < Head) -> [Head | sl_insert(Value, Tail)];
sl_insert(Value, List) -> [Value | List].

sl_list(Main, List, {Contains, Writes, Sizes} = Counts, Handled) ->
    receive
        {write, Worker, Value} ->
            Worker ! {reply, Value},
            sl_list(Main, sl_insert(Value, List), {Contains, Writes + 1, Sizes}, Handled + 1);
        {contains, Worker, Value} ->
            Worker ! {reply, case lists:member(Value, List) of true -> 1; false -> 0 end},
            sl_list(Main, List, {Contains + 1, Writes, Sizes}, Handled + 1);
        {size, Worker} ->
            Worker ! {reply, length(List)},
            sl_list(Main, List, {Contains, Writes, Sizes + 1}, Handled + 1);
        {end_work, Replies} ->
            Answer = sl_answer(Counts, Replies + lie(), List),
            Main ! {sv_done, now_ns(), Answer, Handled + 1}
    end.

%% The list's length, adjacent pairs out of order, and the sum of mix64(position << 32 | value).
sl_walk([], Length, Unsorted, Digest) -> {Length, Unsorted, Digest};
sl_walk([Value | Rest], I, Unsorted, Digest) ->
    Out = case Rest of [Next | _] when Next < Value -> 1; _ -> 0 end,
    sl_walk(Rest, I + 1, Unsorted + Out, (Digest + mix64(((I bsl 32) bor Value) band ?M64)) band ?M64).

%% Every value inserted, sorted (inserts commute).
sl_model(Workers, Messages, WritePercent, SizePercent, Seed) ->
    {Counts, Values} = lists:foldl(fun(W, Acc) -> sl_replay(splitmix(Seed, W), Messages, WritePercent, SizePercent, Acc) end,
                                   {{0, 0, 0}, []}, lists:seq(0, Workers - 1)),
    {C, W, S} = Counts,
    sl_answer(Counts, C + W + S, lists:sort(Values)).

sl_replay(_, 0, _, _, Acc) -> Acc;
sl_replay(State, Left, WritePercent, SizePercent, {{C, W, S}, Values}) ->
    case sl_request(State, self(), WritePercent, SizePercent) of
        {{size, _}, Next} -> sl_replay(Next, Left - 1, WritePercent, SizePercent, {{C, W, S + 1}, Values});
        {{write, _, V}, Next} -> sl_replay(Next, Left - 1, WritePercent, SizePercent, {{C, W + 1, S}, [V | Values]});
        {{contains, _, _}, Next} -> sl_replay(Next, Left - 1, WritePercent, SizePercent, {{C + 1, W, S}, Values})
    end.
