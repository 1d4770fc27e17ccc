%% labctl_chat: the parametric chat application of "Run, Actor, Run" (AGERE 2019; its program,
%% sblessing/chat-app) on Erlang processes, as ours (native/kernels/chat/chat.cpp, chat.hpp): a
%% driver, the directories, the clients, their chats and an accumulator per turn, each a process
%% with its own (unbounded) mailbox, each message one of ours, addressed by pid. The same
%% generators from the same seed (Savina's 16-bit LCG), the same befriending, the same decision
%% per client per turn and the same sequential simulation of those draws, ported word for word:
%% every turn is held to it in the answer as ours holds it, the answer compared here with the
%% simulation's (labctl_peer exits 1 on a wrong one) and by labctl with our kernel's expectation.
%%
%% Measured phase (elapsed_ns), as ours: from the driver's Start (the driver spawned before it)
%% to its last Closed, every iteration whole. Every process counts the messages it handles and
%% adds them to the run's count (an atomics array) before its last send, so that every count is
%% in once the last Closed arrives. Differences from ours, beyond BEAM's scheduler: none in the
%% application; the client's chats are a sorted list of {chat id, pid}.
-module(labctl_chat).
-export([run/1, check/1]).

-define(MASK, 16#FFFFFFFFFFFFFFFF).
-define(FNV_BASIS, 16#cbf29ce484222325).
-define(FNV_PRIME, 16#100000001b3).
-define(ACTIONS, [computes, posts, departures, invites, nothings]).
-define(COMPUTE, 0).
-define(POST, 1).
-define(LEAVE, 2).
-define(INVITE, 3).
-define(NOTHING, 4).
-define(FIBONACCI_35, 9227465).

%% --- what every process reads ---------------------------------------------------------------

-record(settings, {clients, directories, turns, iterations, compute, post, leave, invite, befriend,
                   seed, buffering, compute_repeats}).

settings(P) ->
    G = fun(Name) -> maps:get(Name, P) end,
    #settings{clients = G(<<"clients">>), directories = G(<<"directories">>), turns = G(<<"turns">>),
              iterations = G(<<"iterations">>), compute = G(<<"compute">>), post = G(<<"post">>),
              leave = G(<<"leave">>), invite = G(<<"invite">>), befriend = G(<<"befriend">>),
              seed = G(<<"seed">>), buffering = G(<<"buffering">>),
              compute_repeats = G(<<"compute_repeats">>)}.

%% What ours refuses beyond the ranges (chat.hpp's check_settings): {error, Why} or ok; a
%% befriending that never ends is refused by the simulation.
check(P) ->
    S = settings(P),
    #settings{compute = C, post = Po, leave = L, invite = I, clients = Cl, directories = D} = S,
    if C + Po + L + I > 100 ->
           {error, io_lib:format("params compute (~b), post (~b), leave (~b) and invite (~b) are percentages "
                                 "of the turns: their sum must be at most 100", [C, Po, L, I])};
       Cl < 2 * D ->
           {error, io_lib:format("param clients (~b) must be at least twice directories (~b): each directory "
                                 "needs two clients to befriend", [Cl, D])};
       I > 0, S#settings.befriend =:= 0 ->
           {error, io_lib:format("param befriend must be above 0 where invite (~b) is: a client invites its "
                                 "friends", [I])};
       true -> ok
    end.

%% --- the draws, as chat.hpp's ----------------------------------------------------------------

%% Savina's 16-bit PseudoRandom: the next value, and the next modulo a bound.
next(R) -> (R * 1309 + 13849) band 65535.

fold(Hash, Word) -> ((Hash bxor Word) * ?FNV_PRIME) band ?MASK.

pick(Draw, #settings{compute = C, post = P, leave = L, invite = I}) ->
    if Draw < C -> ?COMPUTE;
       Draw < C + P -> ?POST;
       Draw < C + P + L -> ?LEAVE;
       Draw < C + P + L + I -> ?INVITE;
       true -> ?NOTHING
    end.

directory_seeds(Seed, Directories) ->
    {Seeds, _} = lists:mapfoldl(fun(_, R) -> V = next(R), {V, V} end, Seed, lists:seq(1, Directories)),
    Seeds.

%% A directory's befriending (chat.hpp's befriend_all): for each of its N clients F in order,
%% passes over all its clients C, each drawing next(100) < Percent (made even where C is F), until F
%% has befriended someone; each success is Befriend(C, F, Acc). Throws unfriended where the draws
%% repeat (after 65536 / gcd(N, 65536) passes) with F still friendless. Returns {R, Acc}.
befriend_all(R, _, 0, _, Acc) -> {R, Acc};
befriend_all(R, N, Percent, Befriend, Acc) ->
    Period = 65536 div gcd(N, 65536),
    lists:foldl(fun(F, {R0, A0}) -> befriend_one(R0, N, Percent, Befriend, A0, F, 0, Period) end,
                {R, Acc}, lists:seq(0, N - 1)).

befriend_one(_, _, _, _, _, _, Period, Period) -> throw(unfriended);
befriend_one(R, N, Percent, Befriend, Acc, F, Pass, Period) ->
    {R1, Acc1, Found} =
        lists:foldl(fun(C, {Ri, Ai, Fi}) ->
                            V = next(Ri),
                            case V rem 100 < Percent andalso C =/= F of
                                true -> {V, Befriend(C, F, Ai), true};
                                false -> {V, Ai, Fi}
                            end
                    end, {R, Acc, false}, lists:seq(0, N - 1)),
    case Found of
        true -> {R1, Acc1};
        false -> befriend_one(R1, N, Percent, Befriend, Acc1, F, Pass + 1, Period)
    end.

gcd(A, 0) -> A;
gcd(A, B) -> gcd(B, A rem B).

%% A friend is kept once, in the order first befriended.
add_friend(Friends, Id, Handle) ->
    case lists:keymember(Id, 1, Friends) of
        true -> Friends;
        false -> Friends ++ [{Id, Handle}]
    end.

chat_id(Turn, Creator, Clients) -> Turn * Clients + Creator.

%% The chats a client had at the start of Turn: the first of its sorted list.
settled(Chats, Turn, Clients) ->
    First = chat_id(Turn, 0, Clients),
    length(lists:takewhile(fun({Id, _}) -> Id < First end, Chats)).

%% A client's decision (chat.hpp's decide): {Action, ChatPosition, InvitedPositions, R}.
decide(R0, S, Chats, Friends) ->
    {Position, R1} = case Chats of
                         0 -> {0, next(R0)};
                         _ -> Drawn = next(R0), {Drawn rem Chats, Drawn}
                     end,
    R2 = next(R1),
    Action = case pick(R2 rem 100, S) of
                 A when (A =:= ?POST orelse A =:= ?LEAVE), Chats =:= 0 -> ?NOTHING;
                 A -> A
             end,
    case Action of
        ?INVITE when Friends =:= 0 -> error(no_friend_drew_an_invite);
        ?INVITE ->
            {Order, R3} = lists:foldl(fun(I, {O, Ri}) ->
                                              Swap = next(Ri),
                                              J = Swap rem I,
                                              A1 = element(I, O), B1 = element(J + 1, O),
                                              {setelement(J + 1, setelement(I, O, B1), A1), Swap}
                                      end, {list_to_tuple(lists:seq(0, Friends - 1)), R2},
                                      lists:seq(Friends, 1, -1)),
            R4 = next(R3),
            Invitations = max(1, R4 rem Friends),
            {Action, Position, lists:sublist(tuple_to_list(Order), Invitations), R4};
        _ -> {Action, Position, [], R2}
    end.

%% The program's Fibonacci, by its recursion; a compute makes `Repeats` of Fibonacci(35), each
%% checked, and counts the wrong ones.
fibonacci(X) when X =< 1 -> X;
fibonacci(X) ->
    J = X div 2,
    FibJ = fibonacci(J),
    FibI = fibonacci(J - 1),
    if X rem 2 =:= 0 -> FibJ * (FibJ + FibI * 2);
       X rem 4 =:= 1 -> (FibJ * 2 + FibI) * (FibJ * 2 - FibI) + 2;
       true -> (FibJ * 2 + FibI) * (FibJ * 2 - FibI) - 2
    end.

compute_job(Repeats) -> compute_job(Repeats, 0).

%% 35; 34 under the wrong_answer fault (labctl_peer), which makes every compute wrong.
fibonacci_index() ->
    case persistent_term:get(labctl_peer_fault) of
        wrong_answer -> 34;
        _ -> 35
    end.
compute_job(0, Wrong) -> Wrong;
compute_job(N, Wrong) ->
    %% The index from the process dictionary, so that no compiler could fold the call.
    compute_job(N - 1, Wrong + case fibonacci(get(fibonacci_index)) of ?FIBONACCI_35 -> 0; _ -> 1 end).

%% --- the sequential simulation (chat.hpp's simulate) -----------------------------------------

%% One iteration: {Turns, Befriendings, LogoutLeaves, Decisions}, each turn
%% {Actions (a tuple of five counts), Invitations, DeliveriesMin, DeliveriesMax}.
simulate(S = #settings{clients = Clients, directories = Dirs}) ->
    Seeds = directory_seeds(S#settings.seed, Dirs),
    %% The logins: client Id's generator starts at its directory's next value.
    {Starts, DirRandoms} =
        lists:mapfoldl(fun(Id, Rs) ->
                               D = Id rem Dirs,
                               V = next(maps:get(D, Rs)),
                               {{Id, V}, Rs#{D => V}}
                       end, maps:from_list(lists:zip(lists:seq(0, Dirs - 1), Seeds)), lists:seq(0, Clients - 1)),
    Clients0 = maps:from_list([{Id, {R, [], [], ?FNV_BASIS}} || {Id, R} <- Starts]),
    {Clients1, Befriendings} =
        lists:foldl(fun(D, {Cs, B}) ->
                            In = list_to_tuple(lists:seq(D, Clients - 1, Dirs)),
                            N = tuple_size(In),
                            {_, Acc} = befriend_all(maps:get(D, DirRandoms), N, S#settings.befriend,
                                                    fun(C, F, {Cs0, B0}) ->
                                                            IdC = element(C + 1, In), IdF = element(F + 1, In),
                                                            {befriend_in(IdF, IdC, befriend_in(IdC, IdF, Cs0)), B0 + 2}
                                                    end, {Cs, B}),
                            Acc
                    end, {Clients0, 0}, lists:seq(0, Dirs - 1)),
    {Turns, {Clients2, _}} = lists:mapfoldl(fun(Turn, State) -> simulate_turn(S, Turn, State) end,
                                            {Clients1, #{}}, lists:seq(0, S#settings.turns - 1)),
    {LogoutLeaves, Decisions} = maps:fold(fun(_, {_, _, Chats, Fold}, {L, F}) -> {L + length(Chats), F + Fold} end,
                                          {0, 0}, Clients2),
    {Turns, Befriendings, LogoutLeaves, Decisions}.

befriend_in(Who, Other, Clients) ->
    {R, Friends, Chats, Fold} = maps:get(Who, Clients),
    Clients#{Who => {R, add_friend(Friends, Other, Other), Chats, Fold}}.

simulate_turn(S, Turn, {Clients, Members}) ->
    Ids = lists:seq(0, S#settings.clients - 1),
    {Cs1, {Actions, Posted, Leaving, Made}} =
        lists:foldl(
          fun(Id, {Cs, {Acts, Ps, Ls, Ms}}) ->
                  {R, Friends, Chats, Fold0} = maps:get(Id, Cs),
                  {Action, Position, Invited, R1} = decide(R, S, length(Chats), length(Friends)),
                  Fold1 = fold(Fold0, Action),
                  Acts1 = setelement(Action + 1, Acts, element(Action + 1, Acts) + 1),
                  {Fold, Turned} =
                      case Action of
                          ?POST -> {Chat, _} = lists:nth(Position + 1, Chats),
                                   {fold(Fold1, Chat), {Acts1, [Chat | Ps], Ls, Ms}};
                          ?LEAVE -> {Chat, _} = lists:nth(Position + 1, Chats),
                                    {fold(Fold1, Chat), {Acts1, Ps, [{Id, Chat} | Ls], Ms}};
                          ?INVITE -> Invitees = [element(1, lists:nth(P + 1, Friends)) || P <- Invited],
                                     {lists:foldl(fun(I, H) -> fold(H, I) end, fold(Fold1, length(Invitees)), Invitees),
                                      {Acts1, Ps, Ls, [{Id, Invitees} | Ms]}};
                          _ -> {Fold1, {Acts1, Ps, Ls, Ms}}
                      end,
                  {Cs#{Id => {R1, Friends, Chats, Fold}}, Turned}
          end, {Clients, {{0, 0, 0, 0, 0}, [], [], []}}, Ids),
    %% A post reaches the members at the turn's start, less any that leave it in the turn.
    {Fewest, Most} = lists:foldl(fun(Chat, {Lo, Hi}) ->
                                         Here = maps:get(Chat, Members),
                                         Gone = length([x || {_, C} <- Leaving, C =:= Chat]),
                                         {Lo + Here - Gone, Hi + Here}
                                 end, {0, 0}, Posted),
    {Cs2, Members1} = lists:foldl(fun({Id, Chat}, {Cs, Ms}) ->
                                          {R, F, Chats, Fo} = maps:get(Id, Cs),
                                          Left = maps:get(Chat, Ms) - 1,
                                          {Cs#{Id => {R, F, lists:keydelete(Chat, 1, Chats), Fo}},
                                           case Left of 0 -> maps:remove(Chat, Ms); _ -> Ms#{Chat => Left} end}
                                  end, {Cs1, Members}, lists:reverse(Leaving)),
    {Cs3, Members2} = lists:foldl(fun({Creator, Invitees}, {Cs, Ms}) ->
                                          Chat = chat_id(Turn, Creator, S#settings.clients),
                                          {lists:foldl(fun(Who, C0) ->
                                                               {R, F, Chats, Fo} = maps:get(Who, C0),
                                                               C0#{Who => {R, F, lists:keymerge(1, [{Chat, Chat}], Chats), Fo}}
                                                       end, Cs, [Creator | Invitees]),
                                           Ms#{Chat => 1 + length(Invitees)}}
                                  end, {Cs2, Members1}, lists:reverse(Made)),
    Invitations = lists:sum([length(I) || {_, I} <- Made]),
    {{Actions, Invitations, Fewest, Most}, {Cs3, Members2}}.

%% The messages one run handles, with Deliveries over all iterations (chat.hpp's messages).
messages(S, {Turns, Befriendings, LogoutLeaves, _}, Deliveries) ->
    #settings{directories = D, turns = T, clients = C, iterations = I} = S,
    Joins = lists:sum([Inv || {_, Inv, _, _} <- Turns]),
    Leaves = lists:sum([element(?LEAVE + 1, A) || {A, _, _, _} <- Turns]),
    Posts = lists:sum([element(?POST + 1, A) || {A, _, _, _} <- Turns]),
    PerIteration = 4 * D + 3 * T + T * D + 3 * C + Befriendings + 2 * T * C + 3 * Joins +
        2 * (Leaves + LogoutLeaves) + Posts,
    1 + I * PerIteration + 2 * Deliveries.

%% --- the actors --------------------------------------------------------------------------------

%% Every process adds the messages it handled to the run's count before its last send.
counted(Handled) -> atomics:add(persistent_term:get(labctl_chat_handled), 1, Handled).

now_ns() -> erlang:monotonic_time(nanosecond).

%% The driver (the program's Poker).
driver(S, Plan) ->
    receive {start, Done} -> driver_iteration(S, Plan, Done, 1, 0, #{turns => [], started => [],
                                                                          decisions => 0, logout_leaves => 0})
    end.

driver_iteration(S, Plan, Done, Handled, Iteration, Outcome) ->
    Self = self(),
    Dirs = [spawn(fun() -> directory(S, Seed, Self) end)
            || Seed <- directory_seeds(S#settings.seed, S#settings.directories)],
    DirTuple = list_to_tuple(Dirs),
    [element(Id rem S#settings.directories + 1, DirTuple) ! {login, Id} || Id <- lists:seq(0, S#settings.clients - 1)],
    [D ! befriend_all || D <- Dirs],
    Handled1 = Handled + wait_for(ready, S#settings.directories),
    driver_turns(S, Plan, Done, Handled1, Iteration, Outcome, Dirs, 0, []).

wait_for(_, 0) -> 0;
wait_for(What, N) -> receive What -> 1 + wait_for(What, N - 1) end.

driver_turns(S, Plan, Done, Handled, Iteration, Outcome, Dirs, Turn, Accumulators)
  when Turn < S#settings.turns ->
    Started = now_ns(),
    Self = self(),
    Accumulator = spawn(fun() -> accumulator(S, Turn, Self) end),
    [D ! {poke, Accumulator, Turn} || D <- Dirs],
    receive turn_done -> ok end,
    driver_turns(S, Plan, Done, Handled + 1, Iteration, Outcome#{started := [Started | maps:get(started, Outcome)]},
                 Dirs, Turn + 1, [Accumulator | Accumulators]);
driver_turns(S, Plan, Done, Handled, Iteration, Outcome, Dirs, _, Accumulators) ->
    [D ! disconnect || D <- Dirs],
    {Decisions, LogoutLeaves} = lists:foldl(fun(_, {De, Lo}) -> receive {finished, A, B} -> {De + A, Lo + B} end end,
                                            {0, 0}, Dirs),
    [A ! close || A <- Accumulators],
    Figures = lists:foldl(fun(_, F) -> receive {closed, T, Fig} -> F#{T => Fig} end end, #{}, Accumulators),
    Handled1 = Handled + length(Dirs) + length(Accumulators),  % a Finished each, a Closed each
    Outcome1 = Outcome#{turns := lists:reverse([maps:get(T, Figures) || T <- lists:seq(0, S#settings.turns - 1)],
                                               maps:get(turns, Outcome)),
                        decisions := maps:get(decisions, Outcome) + Decisions,
                        logout_leaves := maps:get(logout_leaves, Outcome) + LogoutLeaves},
    case Iteration + 1 < S#settings.iterations of
        true -> driver_iteration(S, Plan, Done, Handled1, Iteration + 1, Outcome1);
        false -> counted(Handled1), Done ! {outcome, Outcome1}
    end.

%% A directory holds its clients: each made at its login, befriended, told to act each turn and to
%% log out at the end.
directory(S, Seed, Driver) -> directory(S, Seed, Driver, [], 0, 0, 0, 0).

directory(S, R, Driver, Clients, Left, Decisions, LogoutLeaves, Handled) ->
    receive
        {login, Id} ->
            Start = next(R),
            Self = self(),
            Client = spawn(fun() -> put(fibonacci_index, fibonacci_index()), client(S, Id, Self, Start) end),
            directory(S, Start, Driver, Clients ++ [{Id, Client}], Left, Decisions, LogoutLeaves, Handled + 1);
        befriend_all ->
            In = list_to_tuple(Clients),
            {R1, _} = befriend_all(R, tuple_size(In), S#settings.befriend,
                                   fun(C, F, _) ->
                                           {IdC, PidC} = element(C + 1, In), {IdF, PidF} = element(F + 1, In),
                                           PidC ! {befriend, IdF, PidF},
                                           PidF ! {befriend, IdC, PidC}
                                   end, none),
            Driver ! ready,
            directory(S, R1, Driver, Clients, Left, Decisions, LogoutLeaves, Handled + 1);
        {poke, Accumulator, Turn} ->
            [Pid ! {act, Accumulator, Turn} || {_, Pid} <- Clients],
            directory(S, R, Driver, Clients, Left, Decisions, LogoutLeaves, Handled + 1);
        disconnect ->
            [Pid ! logout || {_, Pid} <- Clients],
            directory(S, R, Driver, Clients, Left, Decisions, LogoutLeaves, Handled + 1);
        {client_left, D, L} when Left + 1 < length(Clients) ->
            directory(S, R, Driver, Clients, Left + 1, Decisions + D, LogoutLeaves + L, Handled + 1);
        {client_left, D, L} ->
            counted(Handled + 1),
            Driver ! {finished, Decisions + D, LogoutLeaves + L}
    end.

%% A client acts once a turn as its generator draws, from what it had at the turn's start.
-record(client, {id, directory, r, friends = [], chats = [], decisions = ?FNV_BASIS, logout_leaves = 0,
                 handled = 0}).

client(S, Id, Directory, Start) -> client(S, #client{id = Id, directory = Directory, r = Start}).

client(S, C0) ->
    C = C0#client.handled + 1,
    Me = C0#client{handled = C},
    receive
        {befriend, Id, Pid} ->
            client(S, Me#client{friends = add_friend(Me#client.friends, Id, Pid)});
        {act, Accumulator, Turn} ->
            #client{r = R, chats = Chats, friends = Friends, decisions = Decisions0} = Me,
            {Action, Position, Invited, R1} =
                decide(R, S, settled(Chats, Turn, S#settings.clients), length(Friends)),
            Decisions1 = fold(Decisions0, Action),
            Acted = Me#client{r = R1},
            case Action of
                ?COMPUTE ->
                    Accumulator ! {resolved, ?COMPUTE, compute_job(S#settings.compute_repeats)},
                    client(S, Acted#client{decisions = Decisions1});
                ?POST ->
                    {Chat, Pid} = lists:nth(Position + 1, Chats),
                    Pid ! {post, Accumulator, Me#client.id},
                    client(S, Acted#client{decisions = fold(Decisions1, Chat)});
                ?LEAVE ->
                    {Chat, Pid} = lists:nth(Position + 1, Chats),
                    Pid ! {leave, self(), false, Accumulator},
                    client(S, Acted#client{decisions = fold(Decisions1, Chat)});
                ?INVITE ->
                    ChatId = chat_id(Turn, Me#client.id, S#settings.clients),
                    Self = self(),
                    Pid = spawn(fun() -> chat(S, ChatId, [Self], [], 0) end),
                    Guests = [lists:nth(P + 1, Friends) || P <- Invited],
                    Accumulator ! {invited, length(Guests)},
                    [Pid ! {join, Guest, Accumulator} || {_, Guest} <- Guests],
                    Decisions = lists:foldl(fun({GuestId, _}, H) -> fold(H, GuestId) end,
                                            fold(Decisions1, length(Guests)), Guests),
                    client(S, Acted#client{decisions = Decisions, chats = lists:keymerge(1, [{ChatId, Pid}], Chats)});
                ?NOTHING ->
                    Accumulator ! {resolved, ?NOTHING, 0},
                    client(S, Acted#client{decisions = Decisions1})
            end;
        {forward, _Chat, _Payload, Accumulator} ->
            Accumulator ! delivered,
            client(S, Me);
        {accepted, Pid, ChatId, Accumulator, Buffered} ->
            Accumulator ! {accepted, Buffered},
            client(S, Me#client{chats = lists:keymerge(1, [{ChatId, Pid}], Me#client.chats)});
        {left, ChatId, false, Accumulator} ->
            Accumulator ! {resolved, ?LEAVE, 0},
            client(S, Me#client{chats = lists:keydelete(ChatId, 1, Me#client.chats)});
        {left, ChatId, true, none} ->
            Chats = lists:keydelete(ChatId, 1, Me#client.chats),
            Out = Me#client{chats = Chats, logout_leaves = Me#client.logout_leaves + 1},
            case Chats of
                [] -> leave_directory(Out);
                _ -> client(S, Out)
            end;
        logout when Me#client.chats =:= [] ->
            leave_directory(Me);
        logout ->
            [Pid ! {leave, self(), true, none} || {_, Pid} <- Me#client.chats],
            client(S, Me)
    end.

leave_directory(#client{directory = Directory, decisions = D, logout_leaves = L, handled = H}) ->
    counted(H),
    Directory ! {client_left, D, L}.

%% A chat forwards each post to its members (keeping it with buffering), takes the joins (sending
%% a joiner the kept posts first) and the leaves; it ends once it loses its last member.
chat(S, Id, Members, Buffer, Handled) ->
    receive
        {post, Accumulator, Payload} ->
            Kept = case S#settings.buffering of true -> Buffer ++ [Payload]; false -> Buffer end,
            case Members of
                [] -> Accumulator ! {resolved, ?POST, 0};
                _ -> Accumulator ! {posted, length(Members)},
                     [M ! {forward, self(), Payload, Accumulator} || M <- Members]
            end,
            chat(S, Id, Members, Kept, Handled + 1);
        {join, Client, Accumulator} ->
            Buffered = case S#settings.buffering of
                           true -> [Client ! {forward, self(), P, Accumulator} || P <- Buffer], length(Buffer);
                           false -> 0
                       end,
            Client ! {accepted, self(), Id, Accumulator, Buffered},
            chat(S, Id, Members ++ [Client], Buffer, Handled + 1);
        {leave, Client, Logout, Accumulator} ->
            case lists:delete(Client, Members) of
                [] -> counted(Handled + 1),
                      Client ! {left, Id, Logout, Accumulator};
                Rest -> Client ! {left, Id, Logout, Accumulator},
                        chat(S, Id, Rest, Buffer, Handled + 1)
            end
    end.

%% An accumulator counts one turn's completions (chat.hpp's Tally) and tells the driver when the
%% turn is complete; closed at the iteration's end, it reports its figures.
accumulator(S, Turn, Driver) ->
    accumulator(S, Turn, Driver, #{actions => {0, 0, 0, 0, 0}, invitations => 0, accepted => 0, announced => 0,
                                   delivered => 0, wrong => 0, late => 0, end_ns => 0, resolved => 0,
                                   complete => false}, 0).

accumulator(S, Turn, Driver, T, Handled) ->
    receive
        close ->
            counted(Handled + 1),
            Driver ! {closed, Turn, T};
        Message ->
            Tally = tally(Message, late(T)),
            Settled = settle(Tally, S#settings.clients),
            case maps:get(complete, Settled) =/= maps:get(complete, Tally) of
                true -> Driver ! turn_done;
                false -> ok
            end,
            accumulator(S, Turn, Driver, Settled, Handled + 1)
    end.

late(T = #{complete := true}) -> T#{late := maps:get(late, T) + 1};
late(T) -> T.

tally({resolved, Action, Wrong}, T = #{actions := A}) ->
    T#{actions := setelement(Action + 1, A, element(Action + 1, A) + 1), wrong := maps:get(wrong, T) + Wrong,
       resolved := maps:get(resolved, T) + 1};
tally({posted, Members}, T) -> tally({resolved, ?POST, 0}, T#{announced := maps:get(announced, T) + Members});
tally({invited, N}, T) -> tally({resolved, ?INVITE, 0}, T#{invitations := maps:get(invitations, T) + N});
tally(delivered, T) -> T#{delivered := maps:get(delivered, T) + 1};
tally({accepted, Buffered}, T) ->
    T#{accepted := maps:get(accepted, T) + 1, announced := maps:get(announced, T) + Buffered}.

settle(T = #{complete := false, resolved := Clients, accepted := Same, invitations := Same,
             delivered := Equal, announced := Equal}, Clients) ->
    T#{complete := true, end_ns := now_ns()};
settle(T, _) -> T.

%% --- the run -------------------------------------------------------------------------------------

run(P) ->
    S = settings(P),
    Plan = try simulate(S)  % the oracle, before the phase
           catch throw:unfriended -> {error, unfriended}
           end,
    case Plan of
        {error, unfriended} ->
            {error, io_lib:format("param befriend (~b) with seed (~b), clients (~b) and directories (~b): a client "
                                  "can befriend nobody in its directory (the program loops for ever)",
                                  [S#settings.befriend, S#settings.seed, S#settings.clients, S#settings.directories])};
        _ ->
            persistent_term:put(labctl_chat_handled, atomics:new(1, [{signed, false}])),
            Driver = spawn(fun() -> driver(S, Plan) end),
            Start = now_ns(),
            Driver ! {start, self()},
            Outcome = receive {outcome, O} -> O end,
            Elapsed = now_ns() - Start,
            Handled = atomics:get(persistent_term:get(labctl_chat_handled), 1),
            {Answer, Metrics} = report(S, Plan, Outcome, Handled),
            {Elapsed, Handled, Answer, describe(S, expected(S, Plan)), Metrics}
    end.

%% The answer's figures: the five actions, invitations, logout leaves, decisions, then the checks.
expected(S, {Turns, _, LogoutLeaves, Decisions}) ->
    I = S#settings.iterations,
    Actions = [I * lists:sum([element(K, A) || {A, _, _, _} <- Turns]) || K <- lists:seq(1, 5)],
    {Actions, I * lists:sum([Inv || {_, Inv, _, _} <- Turns]), I * LogoutLeaves, (I * Decisions) band ?MASK,
     {0, 0, 0, 0, 0, 0}}.

describe(S, {Actions, Invitations, LogoutLeaves, Decisions, {Miscounted, Off, Unacked, Late, Wrong, Stray}}) ->
    lists:flatten(
      [io_lib:format("iterations=~b turns=~b clients=~b", [S#settings.iterations, S#settings.turns, S#settings.clients]),
       [io_lib:format(" ~s=~b", [Name, N]) || {Name, N} <- lists:zip(?ACTIONS, Actions)],
       io_lib:format(" invitations=~b logout_leaves=~b decisions=~s miscounted_turns=~b deliveries_off_turns=~b "
                     "unacknowledged=~b late=~b wrong_computes=~b stray_messages=~b",
                     [Invitations, LogoutLeaves, string:lowercase(lists:flatten(io_lib:format("~16.16.0b", [Decisions]))),
                      Miscounted, Off, Unacked, Late, Wrong, Stray])]).

%% chat.hpp's report: the answer from the accumulators' figures held to the simulation's, and the
%% metrics.
report(S, Plan = {PlanTurns, _, _, _}, Outcome, Handled) ->
    Figures = lists:reverse(maps:get(turns, Outcome)),  % gathered newest first
    Started = lists:reverse(maps:get(started, Outcome)),
    Planned = lists:append(lists:duplicate(S#settings.iterations, PlanTurns)),
    Rows = lists:zip3(Figures, Planned, Started),
    Sum = fun(F) -> lists:sum([F(Row) || Row <- Rows]) end,
    Actions = [Sum(fun({#{actions := A}, _, _}) -> element(K, A) end) || K <- lists:seq(1, 5)],
    Miscounted = Sum(fun({#{actions := A, accepted := Acc, invitations := Inv}, {PA, PInv, _, _}, _}) ->
                             case A =:= PA andalso Acc =:= PInv andalso Inv =:= PInv of true -> 0; false -> 1 end
                     end),
    Off = Sum(fun({#{delivered := D}, {_, _, Lo, Hi}, _}) -> case D < Lo orelse D > Hi of true -> 1; false -> 0 end end),
    Unacked = Sum(fun({#{announced := An, delivered := D, invitations := Inv, accepted := Acc}, _, _}) ->
                          abs(An - D) + abs(Inv - Acc)
                  end),
    Late = Sum(fun({#{late := L}, _, _}) -> L end),
    Wrong = Sum(fun({#{wrong := W}, _, _}) -> W end),
    Deliveries = Sum(fun({#{delivered := D}, _, _}) -> D end),
    Invitations = Sum(fun({#{accepted := Acc}, _, _}) -> Acc end),
    Stray = abs(Handled - messages(S, Plan, Deliveries)),
    Answer = describe(S, {Actions, Invitations, maps:get(logout_leaves, Outcome),
                          maps:get(decisions, Outcome) band ?MASK, {Miscounted, Off, Unacked, Late, Wrong, Stray}}),
    Durations = [End - Begin || {#{end_ns := End}, _, Begin} <- Rows],
    Sorted = lists:sort(Durations),
    Turned = case Sorted of
                 [] -> #{};
                 _ -> #{<<"turn_p50_ns">> => percentile(Sorted, 0.50), <<"turn_p99_ns">> => percentile(Sorted, 0.99),
                        <<"turn_max_ns">> => lists:last(Sorted)}
             end,
    Qos = case S#settings.iterations >= 2 of
              true -> #{<<"turn_qos_ns">> => quality_of_service(Durations, S#settings.turns)};
              false -> #{}
          end,
    Counts = maps:from_list([{atom_to_binary(Name), N} || {Name, N} <- lists:zip(?ACTIONS, Actions)]),
    {Answer, maps:merge(maps:merge(Counts#{<<"deliveries">> => Deliveries}, Turned), Qos)}.

%% The nearest rank, as ours: sorted[min(trunc(p * (n - 1) + 0.5), n - 1)].
percentile(Sorted, P) ->
    N = length(Sorted),
    lists:nth(min(trunc(P * (N - 1) + 0.5), N - 1) + 1, Sorted).

%% The program's Pony version's quality of service: per turn the standard deviation (over the
%% count) of its durations across the iterations, the median of those over the turns.
quality_of_service(Durations, Turns) ->
    Iterations = length(Durations) div Turns,
    Grid = list_to_tuple(Durations),
    Spreads = [begin
                   Of = [element(I * Turns + T + 1, Grid) || I <- lists:seq(0, Iterations - 1)],
                   Mean = lists:sum(Of) / Iterations,
                   math:sqrt(lists:sum([(D - Mean) * (D - Mean) || D <- Of]) / Iterations)
               end || T <- lists:seq(0, Turns - 1)],
    median(lists:sort(Spreads)).

median(Sorted) ->
    N = length(Sorted),
    case N rem 2 of
        1 -> lists:nth(N div 2 + 1, Sorted);
        0 -> (lists:nth(N div 2, Sorted) + lists:nth(N div 2 + 1, Sorted)) / 2
    end.
