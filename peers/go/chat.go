// chat: the parametric chat application of "Run, Actor, Run" (AGERE 2019; its program,
// sblessing/chat-app) on goroutines, as ours (native/kernels/chat/chat.cpp, chat.hpp): a driver,
// the directories, the clients, their chats and an accumulator per turn, each a goroutine owning
// its mailbox channel, receiving one message at a time in a type switch, each message one of
// ours, addressed by the mailbox it goes to. The same generators from the same seed (Savina's
// 16-bit LCG, bigRandom), the same befriending, the same decision per client per turn and the same
// sequential simulation of those draws, ported word for word: the run's every turn is held to it
// here as ours holds it (miscounted_turns, deliveries_off_turns, stray_messages in the answer),
// and labctl holds the answer and the message count to our kernel's expectation.
//
// Measured phase (elapsed_ns), as ours: from the driver's Start (the driver's goroutine made
// before it) to its last Closed, every iteration whole: the directories made, the clients logged
// in and befriended, every turn, every logout, the accumulators closed. Every goroutine counts
// the messages it handles and adds them to the run's count as it ends. Differences from ours,
// beyond Go's scheduler: the mailboxes are channels of a fixed capacity, past which a sender
// waits (ours are unbounded): a chat's holds its most members (1 + its invitations), the most
// messages it is ever sent at once, so that a client never waits on a chat and no two full
// mailboxes wait on each other; a directory's its clients and one more, the driver's its
// directories or turns and one more, an accumulator's its turn's messages (from the
// simulation), each at most mailboxCapacity; a client's chatClientCapacity (a run may make a
// million clients). Go's scheduler and its threads exist before the clock starts, as ours.
package main

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// chatClientCapacity is a client's mailbox: its Act, Forwards, acceptances and Lefts of a turn.
const chatClientCapacity = 64

// raw is the generator's next value itself (random.hpp's next(); the program's next_int(0)).
func (r *bigRandom) raw() uint64 {
	r.value = (r.value*1309 + 13849) & 65535
	return r.value
}

// chatAction is what a client does in a turn, numbered as ours (its fold takes the number).
type chatAction uint8

const (
	actCompute chatAction = iota
	actPost
	actLeave
	actInvite
	actNothing
	chatActions = 5
)

var chatActionNames = [chatActions]string{"computes", "posts", "departures", "invites", "nothings"}

// chatFibonacciIndex is a variable, so that the compiler cannot fold a compute's call.
var chatFibonacciIndex uint8 = 35

const chatFibonacci35 uint64 = 9227465

type chatSettings struct {
	clients, directories, turns, iterations uint32
	compute, post, leave, invite, befriend  uint32
	seed                                    uint64
	buffering                               bool
	computeRepeats                          uint64
}

func chatSettingsFrom(p values) chatSettings {
	return chatSettings{
		clients: uint32(p.ints["clients"]), directories: uint32(p.ints["directories"]),
		turns: uint32(p.ints["turns"]), iterations: uint32(p.ints["iterations"]),
		compute: uint32(p.ints["compute"]), post: uint32(p.ints["post"]), leave: uint32(p.ints["leave"]),
		invite: uint32(p.ints["invite"]), befriend: uint32(p.ints["befriend"]), seed: uint64(p.ints["seed"]),
		buffering: p.flags["buffering"], computeRepeats: uint64(p.ints["compute_repeats"]),
	}
}

// chatCheck refuses what ours refuses beyond the ranges (chat.hpp's check_settings), naming the
// parameters; a befriending that never ends is refused by the simulation.
func chatCheck(s *chatSettings) {
	if s.compute+s.post+s.leave+s.invite > 100 {
		fail("params compute (%d), post (%d), leave (%d) and invite (%d) are percentages of the turns: "+
			"their sum must be at most 100", s.compute, s.post, s.leave, s.invite)
	}
	if uint64(s.clients) < 2*uint64(s.directories) {
		fail("param clients (%d) must be at least twice directories (%d): each directory needs two clients "+
			"to befriend", s.clients, s.directories)
	}
	if s.invite > 0 && s.befriend == 0 {
		fail("param befriend must be above 0 where invite (%d) is: a client invites its friends", s.invite)
	}
}

// chatThresholds is the program's BehaviorFactory: a draw in [0, 100) against cumulative bounds.
type chatThresholds struct{ compute, post, leave, invite uint64 }

func newChatThresholds(s *chatSettings) chatThresholds {
	c := uint64(s.compute)
	p := c + uint64(s.post)
	l := p + uint64(s.leave)
	return chatThresholds{c, p, l, l + uint64(s.invite)}
}

func (t chatThresholds) pick(draw uint64) chatAction {
	switch {
	case draw < t.compute:
		return actCompute
	case draw < t.post:
		return actPost
	case draw < t.leave:
		return actLeave
	case draw < t.invite:
		return actInvite
	}
	return actNothing
}

// chatDirectorySeeds: the first `directories` values of a generator started at `seed`.
func chatDirectorySeeds(seed uint64, directories uint32) []uint64 {
	top := bigRandom{seed}
	seeds := make([]uint64, directories)
	for i := range seeds {
		seeds[i] = top.raw()
	}
	return seeds
}

// chatClientsOf: the clients of directory d (client id logs in at id % directories).
func chatClientsOf(d uint32, s *chatSettings) uint32 {
	return (s.clients - d + s.directories - 1) / s.directories
}

var errUnfriended = errors.New("a client can befriend nobody in its directory")

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// chatBefriending is a directory's befriending, as ours: for each of its n clients f in order,
// passes over all its clients c, each drawing next(100) < percent (the draw made even where c is
// f), until f has befriended someone; each success calls befriend(c, f). The draws and the
// passes' positions repeat after 65536 / gcd(n, 65536) passes: past them, errUnfriended.
func chatBefriending(random *bigRandom, n, percent uint32, befriend func(c, f uint32)) error {
	if percent == 0 {
		return nil
	}
	period := 65536 / gcd(uint64(n), 65536)
	for f := uint32(0); f < n; f++ {
		found := false
		for pass := uint64(0); !found; pass++ {
			if pass == period {
				return errUnfriended
			}
			for c := uint32(0); c < n; c++ {
				if random.next(100) < uint64(percent) && c != f {
					befriend(c, f)
					found = true
				}
			}
		}
	}
	return nil
}

// keyed is a client's friend (by id) or chat (by chat id) with its handle: a mailbox, or in the
// simulation the key again.
type keyed[K uint32 | uint64, H any] struct {
	key    K
	handle H
}

// chatAddFriend keeps each friend once, in the order first befriended.
func chatAddFriend[H any](friends []keyed[uint32, H], id uint32, handle H) []keyed[uint32, H] {
	for _, f := range friends {
		if f.key == id {
			return friends
		}
	}
	return append(friends, keyed[uint32, H]{id, handle})
}

// chatID: the turn a chat was made in and its maker; a client keeps its chats ordered by it.
func chatID(turn, creator, clients uint32) uint64 {
	return uint64(turn)*uint64(clients) + uint64(creator)
}

func chatInsert[H any](chats []keyed[uint64, H], id uint64, handle H) []keyed[uint64, H] {
	at := sort.Search(len(chats), func(i int) bool { return chats[i].key >= id })
	chats = append(chats, keyed[uint64, H]{})
	copy(chats[at+1:], chats[at:])
	chats[at] = keyed[uint64, H]{id, handle}
	return chats
}

// chatSettled: the chats a client had at the start of `turn`, the first of its list.
func chatSettled[H any](chats []keyed[uint64, H], turn, clients uint32) int {
	first := chatID(turn, 0, clients)
	return sort.Search(len(chats), func(i int) bool { return chats[i].key >= first })
}

func chatErase[H any](chats []keyed[uint64, H], id uint64) []keyed[uint64, H] {
	for i, c := range chats {
		if c.key == id {
			return append(chats[:i], chats[i+1:]...)
		}
	}
	return chats
}

// chatDecision is a client's decision in a turn (chat.hpp's decide): a chat's position drawn
// (the bare next() with none), then the action; an invite shuffles its friends' positions and
// invites the first next(friends) of them (at least one).
type chatDecision struct {
	action  chatAction
	chat    uint32
	invited []uint32
}

func chatDecide(random *bigRandom, t chatThresholds, chats, friends int) chatDecision {
	var d chatDecision
	if chats == 0 {
		random.raw()
	} else {
		d.chat = uint32(random.next(uint64(chats)))
	}
	d.action = t.pick(random.next(100))
	if (d.action == actPost || d.action == actLeave) && chats == 0 {
		d.action = actNothing
	}
	if d.action == actInvite {
		if friends == 0 {
			panic("chat: a client with no friend drew an invite")
		}
		order := make([]uint32, friends)
		for i := range order {
			order[i] = uint32(i)
		}
		for i := friends; i > 0; i-- {
			j := random.next(uint64(i))
			order[i-1], order[j] = order[j], order[i-1]
		}
		invitations := random.next(uint64(friends))
		if invitations == 0 {
			invitations = 1
		}
		d.invited = order[:invitations]
	}
	return d
}

// chatFibonacci is the program's Fibonacci, by its recursion.
func chatFibonacci(x uint8) uint64 {
	if x <= 1 {
		return uint64(x)
	}
	j := x / 2
	fibJ, fibI := chatFibonacci(j), chatFibonacci(j-1)
	if x%2 == 0 {
		return fibJ * (fibJ + fibI*2)
	}
	if x%4 == 1 {
		return (fibJ*2+fibI)*(fibJ*2-fibI) + 2
	}
	return (fibJ*2+fibI)*(fibJ*2-fibI) - 2
}

// chatComputeJob: `repeats` evaluations of Fibonacci(35), each checked; the wrong ones counted.
func chatComputeJob(repeats uint64) uint64 {
	var wrong uint64
	for i := uint64(0); i < repeats; i++ {
		if chatFibonacci(chatFibonacciIndex) != chatFibonacci35 {
			wrong++
		}
	}
	return wrong
}

// chatTurnFigures is what one turn's accumulator saw (chat.hpp's TurnFigures).
type chatTurnFigures struct {
	actions                          [chatActions]uint64
	invitations, accepted, announced uint64
	delivered, wrongComputes, late   uint64
	endNs                            int64
}

// chatTally is the accumulator's side (chat.hpp's Tally): the turn is complete when every
// client's act is resolved, every announced delivery and every announced invitation
// acknowledged. Each call returns true where it completes the turn.
type chatTally struct {
	clients, resolvedCount uint64
	complete               bool
	figures                chatTurnFigures
}

func (t *chatTally) countMessage() {
	if t.complete {
		t.figures.late++
	}
}

func (t *chatTally) settle() bool {
	f := &t.figures
	if t.complete || t.resolvedCount != t.clients || f.accepted != f.invitations || f.delivered != f.announced {
		return false
	}
	t.complete = true
	return true
}

func (t *chatTally) resolved(action chatAction, wrong uint64) bool {
	t.countMessage()
	t.figures.actions[action]++
	t.figures.wrongComputes += wrong
	t.resolvedCount++
	return t.settle()
}

func (t *chatTally) posted(members uint64) bool {
	t.figures.announced += members
	return t.resolved(actPost, 0)
}

func (t *chatTally) invited(invitations uint64) bool {
	t.figures.invitations += invitations
	return t.resolved(actInvite, 0)
}

func (t *chatTally) delivered() bool {
	t.countMessage()
	t.figures.delivered++
	return t.settle()
}

func (t *chatTally) accepted(buffered uint64) bool {
	t.countMessage()
	t.figures.accepted++
	t.figures.announced += buffered
	return t.settle()
}

// chatTurnPlan and chatPlan: one turn and one iteration as the sequential simulation has them.
type chatTurnPlan struct {
	actions                      [chatActions]uint64
	invitations                  uint64
	deliveriesMin, deliveriesMax uint64
}

type chatPlan struct {
	turns                                 []chatTurnPlan
	befriendings, logoutLeaves, decisions uint64
}

func (p *chatPlan) total(action chatAction) uint64 {
	var sum uint64
	for _, t := range p.turns {
		sum += t.actions[action]
	}
	return sum
}

func (p *chatPlan) invitations() uint64 {
	var sum uint64
	for _, t := range p.turns {
		sum += t.invitations
	}
	return sum
}

// chatSimulate is the sequential simulation of one iteration (chat.hpp's simulate): every draw
// of the directories and the clients in the program's order, each turn's decisions from the
// state at the turn's start, then their effects (leaves, new chats and their joins).
func chatSimulate(s *chatSettings) (chatPlan, error) {
	type client struct {
		random  bigRandom
		friends []keyed[uint32, uint32]
		chats   []keyed[uint64, uint64]
		fold    uint64
	}
	thresholds := newChatThresholds(s)
	var plan chatPlan
	clients := make([]client, s.clients)
	logged := make([][]uint32, s.directories)
	var directories []bigRandom
	for _, seed := range chatDirectorySeeds(s.seed, s.directories) {
		directories = append(directories, bigRandom{seed})
	}
	for id := uint32(0); id < s.clients; id++ {
		d := id % s.directories
		clients[id].random = bigRandom{directories[d].raw()}
		clients[id].fold = fnvBasis
		logged[d] = append(logged[d], id)
	}
	for d := uint32(0); d < s.directories; d++ {
		in := logged[d]
		err := chatBefriending(&directories[d], uint32(len(in)), s.befriend, func(c, f uint32) {
			clients[in[c]].friends = chatAddFriend(clients[in[c]].friends, in[f], in[f])
			clients[in[f]].friends = chatAddFriend(clients[in[f]].friends, in[c], in[c])
			plan.befriendings += 2
		})
		if err != nil {
			return plan, err
		}
	}
	members := map[uint64]uint64{} // the live chats' members
	type made struct {
		creator  uint32
		invitees []uint32
	}
	type leaving struct {
		client uint32
		chat   uint64
	}
	for turn := uint32(0); turn < s.turns; turn++ {
		var tp chatTurnPlan
		var postedTo []uint64
		var leaves []leaving
		var makes []made
		for id := uint32(0); id < s.clients; id++ {
			c := &clients[id]
			d := chatDecide(&c.random, thresholds, len(c.chats), len(c.friends))
			tp.actions[d.action]++
			c.fold = fnvFold(c.fold, uint64(d.action))
			switch d.action {
			case actPost, actLeave:
				chat := c.chats[d.chat].key
				c.fold = fnvFold(c.fold, chat)
				if d.action == actPost {
					postedTo = append(postedTo, chat)
				} else {
					leaves = append(leaves, leaving{id, chat})
				}
			case actInvite:
				c.fold = fnvFold(c.fold, uint64(len(d.invited)))
				invitees := make([]uint32, 0, len(d.invited))
				for _, position := range d.invited {
					invitees = append(invitees, c.friends[position].key)
					c.fold = fnvFold(c.fold, uint64(c.friends[position].key))
				}
				tp.invitations += uint64(len(invitees))
				makes = append(makes, made{id, invitees})
			}
		}
		// A post reaches the members at the turn's start, less any that leave it in the turn
		// before the post arrives.
		for _, chat := range postedTo {
			var gone uint64
			for _, l := range leaves {
				if l.chat == chat {
					gone++
				}
			}
			here, ok := members[chat]
			if !ok {
				panic("chat: simulation lost a chat")
			}
			tp.deliveriesMax += here
			tp.deliveriesMin += here - gone
		}
		for _, l := range leaves {
			clients[l.client].chats = chatErase(clients[l.client].chats, l.chat)
			if members[l.chat]--; members[l.chat] == 0 {
				delete(members, l.chat)
			}
		}
		for _, m := range makes {
			id := chatID(turn, m.creator, s.clients)
			members[id] = 1 + uint64(len(m.invitees))
			clients[m.creator].chats = chatInsert(clients[m.creator].chats, id, id)
			for _, invitee := range m.invitees {
				clients[invitee].chats = chatInsert(clients[invitee].chats, id, id)
			}
		}
		plan.turns = append(plan.turns, tp)
	}
	for _, c := range clients {
		plan.logoutLeaves += uint64(len(c.chats))
		plan.decisions += c.fold
	}
	return plan, nil
}

// chatMessages: the messages one run handles, every handler run, with `deliveries` over all
// iterations (chat.hpp's messages).
func chatMessages(s *chatSettings, plan *chatPlan, deliveries uint64) uint64 {
	d, t, c := uint64(s.directories), uint64(s.turns), uint64(s.clients)
	joins, leaves := plan.invitations(), plan.total(actLeave)
	perIteration := 4*d + 3*t + t*d + 3*c + plan.befriendings + 2*t*c + 3*joins +
		2*(leaves+plan.logoutLeaves) + plan.total(actPost)
	return 1 + uint64(s.iterations)*perIteration + 2*deliveries
}

// chatAnswer is the answer's figures (chat.hpp's Answer).
type chatAnswer struct {
	actions                                             [chatActions]uint64
	invitations, logoutLeaves, decisions                uint64
	miscountedTurns, deliveriesOffTurns, unacknowledged uint64
	late, wrongComputes, strayMessages                  uint64
}

func (a *chatAnswer) describe(s *chatSettings) string {
	text := fmt.Sprintf("iterations=%d turns=%d clients=%d", s.iterations, s.turns, s.clients)
	for i, name := range chatActionNames {
		text += fmt.Sprintf(" %s=%d", name, a.actions[i])
	}
	return text + fmt.Sprintf(" invitations=%d logout_leaves=%d decisions=%016x miscounted_turns=%d "+
		"deliveries_off_turns=%d unacknowledged=%d late=%d wrong_computes=%d stray_messages=%d",
		a.invitations, a.logoutLeaves, a.decisions, a.miscountedTurns, a.deliveriesOffTurns, a.unacknowledged,
		a.late, a.wrongComputes, a.strayMessages)
}

// chatOutcome is what a run gathered: every turn's figures and start (iteration after
// iteration), the clients' decision folds added up and the chats they left at logout.
type chatOutcome struct {
	turns                   []chatTurnFigures
	startedNs               []int64
	decisions, logoutLeaves uint64
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

func medianOf(values []float64) float64 {
	sort.Float64s(values)
	n := len(values)
	if n%2 == 1 {
		return values[n/2]
	}
	return (values[n/2-1] + values[n/2]) / 2
}

// chatQualityOfService is the program's Pony version's: per turn the standard deviation (over
// the count) of its durations across the iterations, the median of those over the turns.
func chatQualityOfService(durations []int64, turns uint32) float64 {
	iterations := len(durations) / int(turns)
	var spreads []float64
	for t := 0; t < int(turns); t++ {
		var mean float64
		for i := 0; i < iterations; i++ {
			mean += float64(durations[i*int(turns)+t])
		}
		mean /= float64(iterations)
		var squares float64
		for i := 0; i < iterations; i++ {
			d := float64(durations[i*int(turns)+t]) - mean
			squares += d * d
		}
		spreads = append(spreads, math.Sqrt(squares/float64(iterations)))
	}
	return medianOf(spreads)
}

// chatReport is chat.hpp's report: the answer from the accumulators' figures held to the
// simulation's, and the metrics.
func chatReport(s *chatSettings, plan *chatPlan, outcome *chatOutcome, handled uint64) (string, map[string]float64) {
	a := chatAnswer{decisions: outcome.decisions, logoutLeaves: outcome.logoutLeaves}
	var deliveries uint64
	var durations []int64
	for k, f := range outcome.turns {
		p := plan.turns[k%int(s.turns)]
		same := f.accepted == p.invitations && f.invitations == p.invitations
		for i := range f.actions {
			a.actions[i] += f.actions[i]
			same = same && f.actions[i] == p.actions[i]
		}
		if !same {
			a.miscountedTurns++
		}
		a.invitations += f.accepted
		if f.delivered < p.deliveriesMin || f.delivered > p.deliveriesMax {
			a.deliveriesOffTurns++
		}
		a.unacknowledged += absDiff(f.announced, f.delivered) + absDiff(f.invitations, f.accepted)
		a.late += f.late
		a.wrongComputes += f.wrongComputes
		deliveries += f.delivered
		durations = append(durations, f.endNs-outcome.startedNs[k])
	}
	if want := uint64(s.turns) * uint64(s.iterations); uint64(len(outcome.turns)) != want {
		a.miscountedTurns += absDiff(want, uint64(len(outcome.turns)))
	}
	a.strayMessages = absDiff(handled, chatMessages(s, plan, deliveries))
	metrics := map[string]float64{"deliveries": float64(deliveries)}
	for i, name := range chatActionNames {
		metrics[name] = float64(a.actions[i])
	}
	if len(durations) > 0 {
		sorted := append([]int64(nil), durations...)
		sortInt64s(sorted)
		metrics["turn_p50_ns"] = float64(percentile(sorted, 0.50))
		metrics["turn_p99_ns"] = float64(percentile(sorted, 0.99))
		metrics["turn_max_ns"] = float64(sorted[len(sorted)-1])
		if s.iterations >= 2 {
			metrics["turn_qos_ns"] = chatQualityOfService(durations, s.turns)
		}
	}
	return a.describe(s), metrics
}

// The messages (chat.hpp's), by who receives them; an actor is addressed by its mailbox.
type (
	// The driver's.
	chatStart    struct{}
	chatReady    struct{}
	chatTurnDone struct{}
	chatFinished struct{ decisions, logoutLeaves uint64 }
	chatClosed   struct {
		turn    uint32
		figures chatTurnFigures
	}
	// A directory's.
	chatLogin       struct{ id uint32 }
	chatBefriendAll struct{}
	chatPoke        struct {
		accumulator chan<- message
		turn        uint32
	}
	chatDisconnect struct{}
	chatClientLeft struct{ decisions, logoutLeaves uint64 }
	// A client's.
	chatBefriend struct {
		id     uint32
		client chan<- message
	}
	chatAct struct {
		accumulator chan<- message
		turn        uint32
	}
	chatForward struct {
		chat        chan<- message
		payload     uint32
		accumulator chan<- message
	}
	chatAccepted struct {
		chat        chan<- message
		id          uint64
		accumulator chan<- message
		buffered    uint64
	}
	chatLeft struct {
		id          uint64
		logout      bool
		accumulator chan<- message // none when logging out
	}
	chatLogout struct{}
	// A chat's.
	chatPost struct {
		accumulator chan<- message
		payload     uint32 // the poster's id
	}
	chatJoin struct {
		client, accumulator chan<- message
	}
	chatLeave struct {
		client      chan<- message
		logout      bool
		accumulator chan<- message
	}
	// An accumulator's.
	chatResolved struct {
		action chatAction
		wrong  uint64
	}
	chatPosted      struct{ members uint64 }
	chatInvited     struct{ invitations uint64 }
	chatDelivered   struct{}
	chatAcceptedAck struct{ buffered uint64 }
	chatClose       struct{}
)

// chatWorld is what every goroutine of a run reads, and the run's count of messages handled.
type chatWorld struct {
	s          *chatSettings
	plan       *chatPlan
	thresholds chatThresholds
	epoch      time.Time
	handled    uint64 // added to by each goroutine as it ends (atomic)
	actors     sync.WaitGroup
}

func (w *chatWorld) now() int64 { return time.Since(w.epoch).Nanoseconds() }

// spawn runs an actor's loop in a goroutine of its own; it returns the messages it handled.
func (w *chatWorld) spawn(loop func() uint64) {
	w.actors.Add(1)
	go func() {
		atomic.AddUint64(&w.handled, loop())
		w.actors.Done()
	}()
}

func capped(most uint64) int {
	if most > mailboxCapacity {
		return mailboxCapacity
	}
	return int(most)
}

// chatDriver is the program's Poker: each iteration a fresh application, its turns one after
// another, its clients logged out and its accumulators closed.
func chatDriver(w *chatWorld, self chan message, done chan<- chatOutcome) uint64 {
	s := w.s
	var handled uint64
	var directories, accumulators []chan message
	var figures []chatTurnFigures
	var iteration, turn, count uint32
	var outcome chatOutcome
	beginIteration := func() {
		directories = directories[:0]
		for d, seed := range chatDirectorySeeds(s.seed, s.directories) {
			mailbox := make(chan message, capped(uint64(chatClientsOf(uint32(d), s))+1))
			seed := seed
			w.spawn(func() uint64 { return chatDirectory(w, seed, mailbox, self) })
			directories = append(directories, mailbox)
		}
		for id := uint32(0); id < s.clients; id++ {
			directories[id%s.directories] <- chatLogin{id}
		}
		for _, directory := range directories {
			directory <- chatBefriendAll{}
		}
	}
	startTurn := func() {
		outcome.startedNs = append(outcome.startedNs, w.now())
		p := w.plan.turns[turn]
		mailbox := make(chan message, capped(uint64(s.clients)+p.invitations+p.deliveriesMax+1))
		t := turn
		w.spawn(func() uint64 { return chatAccumulator(w, t, mailbox, self) })
		accumulators = append(accumulators, mailbox)
		for _, directory := range directories {
			directory <- chatPoke{mailbox, turn}
		}
	}
	for m := range self {
		handled++
		switch m := m.(type) {
		case chatStart:
			beginIteration()
		case chatReady:
			if count++; count < s.directories {
				continue
			}
			count = 0
			startTurn()
		case chatTurnDone:
			if turn++; turn < s.turns {
				startTurn()
				continue
			}
			for _, directory := range directories {
				directory <- chatDisconnect{}
			}
		case chatFinished:
			outcome.decisions += m.decisions
			outcome.logoutLeaves += m.logoutLeaves
			if count++; count < s.directories {
				continue
			}
			count = 0
			figures = make([]chatTurnFigures, s.turns)
			for _, accumulator := range accumulators {
				accumulator <- chatClose{}
			}
		case chatClosed:
			figures[m.turn] = m.figures
			if count++; count < s.turns {
				continue
			}
			count = 0
			outcome.turns = append(outcome.turns, figures...)
			accumulators = accumulators[:0]
			turn = 0
			if iteration++; iteration < s.iterations {
				beginIteration()
				continue
			}
			done <- outcome
			return handled
		}
	}
	return handled
}

// chatDirectory holds its clients: it makes each at login (its generator's next value the
// client's start), befriends them, tells each to act each turn and to log out at the end.
func chatDirectory(w *chatWorld, seed uint64, self chan message, driver chan<- message) uint64 {
	random := bigRandom{seed}
	var handled uint64
	var clients []keyed[uint32, chan message]
	var left int
	var decisions, logoutLeaves uint64
	for m := range self {
		handled++
		switch m := m.(type) {
		case chatLogin:
			start, id := random.raw(), m.id
			mailbox := make(chan message, chatClientCapacity)
			w.spawn(func() uint64 { return chatClient(w, id, self, start, mailbox) })
			clients = append(clients, keyed[uint32, chan message]{id, mailbox})
		case chatBefriendAll:
			err := chatBefriending(&random, uint32(len(clients)), w.s.befriend, func(c, f uint32) {
				clients[c].handle <- chatBefriend{clients[f].key, clients[f].handle}
				clients[f].handle <- chatBefriend{clients[c].key, clients[c].handle}
			})
			if err != nil {
				panic("chat: " + err.Error()) // the simulation, before the phase, found it first
			}
			driver <- chatReady{}
		case chatPoke:
			for _, c := range clients {
				c.handle <- chatAct{m.accumulator, m.turn}
			}
		case chatDisconnect:
			for _, c := range clients {
				c.handle <- chatLogout{}
			}
		case chatClientLeft:
			decisions += m.decisions
			logoutLeaves += m.logoutLeaves
			if left++; left < len(clients) {
				continue
			}
			driver <- chatFinished{decisions, logoutLeaves}
			return handled
		}
	}
	return handled
}

// chatClient acts once a turn as its generator draws, from what it had at the turn's start.
func chatClient(w *chatWorld, id uint32, directory chan<- message, seed uint64, self chan message) uint64 {
	s := w.s
	random := bigRandom{seed}
	var handled uint64
	var friends []keyed[uint32, chan<- message]
	var chats []keyed[uint64, chan<- message]
	decisions := fnvBasis
	var logoutLeaves uint64
	for m := range self {
		handled++
		switch m := m.(type) {
		case chatBefriend:
			friends = chatAddFriend(friends, m.id, m.client)
		case chatAct:
			d := chatDecide(&random, w.thresholds, chatSettled(chats, m.turn, s.clients), len(friends))
			decisions = fnvFold(decisions, uint64(d.action))
			switch d.action {
			case actCompute:
				m.accumulator <- chatResolved{actCompute, chatComputeJob(s.computeRepeats)}
			case actPost:
				decisions = fnvFold(decisions, chats[d.chat].key)
				chats[d.chat].handle <- chatPost{m.accumulator, id}
			case actLeave:
				decisions = fnvFold(decisions, chats[d.chat].key)
				chats[d.chat].handle <- chatLeave{self, false, m.accumulator}
			case actInvite:
				chat := chatID(m.turn, id, s.clients)
				// Its most members: every message it is ever sent at once (its joins, or a post or
				// a leave from each member in a turn), so that no client waits on it.
				mailbox := make(chan message, 1+len(d.invited))
				w.spawn(func() uint64 { return chatChat(w, chat, self, mailbox) })
				chats = chatInsert[chan<- message](chats, chat, mailbox)
				decisions = fnvFold(decisions, uint64(len(d.invited)))
				m.accumulator <- chatInvited{uint64(len(d.invited))}
				for _, position := range d.invited {
					decisions = fnvFold(decisions, uint64(friends[position].key))
					mailbox <- chatJoin{friends[position].handle, m.accumulator}
				}
			case actNothing:
				m.accumulator <- chatResolved{actNothing, 0}
			}
		case chatForward:
			m.accumulator <- chatDelivered{}
		case chatAccepted:
			chats = chatInsert(chats, m.id, m.chat)
			m.accumulator <- chatAcceptedAck{m.buffered}
		case chatLeft:
			chats = chatErase(chats, m.id)
			if !m.logout {
				m.accumulator <- chatResolved{actLeave, 0}
				continue
			}
			logoutLeaves++
			if len(chats) == 0 {
				directory <- chatClientLeft{decisions, logoutLeaves}
				return handled
			}
		case chatLogout:
			if len(chats) == 0 {
				directory <- chatClientLeft{decisions, logoutLeaves}
				return handled
			}
			for _, c := range chats {
				c.handle <- chatLeave{self, true, nil}
			}
		}
	}
	return handled
}

// chatChat forwards each post to its members (keeping it where buffering), takes the joins
// (sending a joiner the kept posts first) and the leaves; it goes once it loses its last member.
func chatChat(w *chatWorld, id uint64, initiator chan<- message, self chan message) uint64 {
	var handled uint64
	members := []chan<- message{initiator}
	var buffer []uint32
	for m := range self {
		handled++
		switch m := m.(type) {
		case chatPost:
			if w.s.buffering {
				buffer = append(buffer, m.payload)
			}
			if len(members) == 0 {
				m.accumulator <- chatResolved{actPost, 0}
				continue
			}
			m.accumulator <- chatPosted{uint64(len(members))}
			for _, member := range members {
				member <- chatForward{self, m.payload, m.accumulator}
			}
		case chatJoin:
			members = append(members, m.client)
			var buffered uint64
			if w.s.buffering {
				buffered = uint64(len(buffer))
				for _, payload := range buffer {
					m.client <- chatForward{self, payload, m.accumulator}
				}
			}
			m.client <- chatAccepted{self, id, m.accumulator, buffered}
		case chatLeave:
			for i, member := range members {
				if member == m.client {
					members = append(members[:i], members[i+1:]...)
					break
				}
			}
			m.client <- chatLeft{id, m.logout, m.accumulator}
			if len(members) == 0 {
				return handled
			}
		}
	}
	return handled
}

// chatAccumulator counts one turn's completions and tells the driver when the turn is complete;
// it reports its figures when closed, at the iteration's end.
func chatAccumulator(w *chatWorld, turn uint32, self chan message, driver chan<- message) uint64 {
	var handled uint64
	tally := chatTally{clients: uint64(w.s.clients)}
	for m := range self {
		handled++
		var completed bool
		switch m := m.(type) {
		case chatResolved:
			completed = tally.resolved(m.action, m.wrong)
		case chatPosted:
			completed = tally.posted(m.members)
		case chatInvited:
			completed = tally.invited(m.invitations)
		case chatDelivered:
			completed = tally.delivered()
		case chatAcceptedAck:
			completed = tally.accepted(m.buffered)
		case chatClose:
			driver <- chatClosed{turn, tally.figures}
			return handled
		}
		if completed {
			tally.figures.endNs = w.now()
			driver <- chatTurnDone{}
		}
	}
	return handled
}

func runChat(p values) result {
	s := chatSettingsFrom(p)
	chatCheck(&s)
	plan, err := chatSimulate(&s) // the oracle, before the phase
	if err != nil {
		fail("param befriend (%d) with seed (%d), clients (%d) and directories (%d): %v (the program "+
			"loops for ever)", s.befriend, s.seed, s.clients, s.directories, err)
	}
	w := &chatWorld{s: &s, plan: &plan, thresholds: newChatThresholds(&s), epoch: time.Now()}
	most := uint64(s.directories)
	if uint64(s.turns) > most {
		most = uint64(s.turns)
	}
	driver := make(chan message, capped(most+1))
	done := make(chan chatOutcome, 1)
	w.spawn(func() uint64 { return chatDriver(w, driver, done) })
	start := time.Now()
	driver <- chatStart{}
	outcome := <-done
	elapsed := time.Since(start).Nanoseconds()
	w.actors.Wait() // every goroutine has ended and added its count
	handled := atomic.LoadUint64(&w.handled)
	answer, metrics := chatReport(&s, &plan, &outcome, handled)
	return result{ElapsedNs: max64(elapsed, 1), Messages: int64(handled), Answer: answer, Metrics: metrics}
}
