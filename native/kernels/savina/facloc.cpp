// savina_facloc: Savina's 20. Online Facility Location (facloc). A producer streams points, one
// per acknowledgement, into a quadtree of quadrant agents: a quadrant without children keeps its
// customers and their cost; when the cost passes the threshold it opens its facility and splits
// into four children, which take over its customers, and from then on forwards each point to the
// child whose box holds it. Measures a stream through a growing tree of agents.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "parallel.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_facloc {
namespace {

constexpr const char* kName = "savina_facloc";

struct Point {
    double x, y;
};

// Savina's Point.getDistance.
inline double distance(const Point& a, const Point& b) noexcept {
    const double dx = b.x - a.x;
    const double dy = b.y - a.y;
    return std::sqrt((dx * dx) + (dy * dy));
}

// Savina's Box: closed on every side.
struct Box {
    double x1, y1, x2, y2;
    bool contains(const Point& p) const noexcept { return x1 <= p.x && y1 <= p.y && p.x <= x2 && p.y <= y2; }
    Point mid() const noexcept { return {(x1 + x2) / 2, (y1 + y2) / 2}; }
};

// Savina's partition: the children's boxes around the facility f, in Savina's order (top left,
// top right, bottom left, bottom right).
inline void split(const Box& b, const Point& f, Box (&children)[4]) noexcept {
    children[0] = {b.x1, f.y, f.x, b.y2};
    children[1] = {f.x, f.y, b.x2, b.y2};
    children[2] = {b.x1, b.y1, f.x, f.y};
    children[3] = {f.x, b.y1, b.x2, f.y};
}

struct Setup {
    std::uint32_t points;
    double grid;
    double alpha;
    std::uint32_t cutoff_depth;  // 0: none
    std::uint64_t seed;
    double threshold() const noexcept { return alpha * (std::sqrt(2.0) * grid); }  // Savina's ALPHA * F
    bool may_split(std::uint32_t depth) const noexcept { return cutoff_depth == 0 || depth < cutoff_depth; }
};

Setup setup(const Params& params) {
    return {std::uint32_t(params.integer("points")), params.real("grid_size"), params.real("alpha"),
            std::uint32_t(params.integer("cutoff_depth")), std::uint64_t(params.integer("seed"))};
}

// The customers, drawn before the phase: x then y, each unit() * grid, from stream (seed, 0).
std::vector<Point> customers(const Setup& s) {
    savina::SplitMix64 random(s.seed, 0);
    std::vector<Point> points(s.points);
    for (Point& p : points) {
        p.x = random.unit() * s.grid;
        p.y = random.unit() * s.grid;
    }
    return points;
}

// What a subtree of quadrants reports (Savina's ConfirmExit, with more in it).
struct Summary {
    std::uint64_t facilities = 0;  // Savina's count: open quadrants below, +1 for an open one
    std::uint64_t customers = 0;   // kept by quadrants without children at the end
    std::uint64_t quadrants = 0;
    std::uint64_t splits = 0;      // quadrants that opened their facility
    std::uint64_t max_depth = 0;
    double cost = 0;               // the childless quadrants' costs, summed child 0..3 at each level
    std::uint64_t handled = 0;     // messages handled (not part of the answer)
};

// An open quadrant's summary from its children's, in child order.
Summary combine(const Summary (&children)[4], std::uint32_t depth) {
    Summary s;
    s.quadrants = 1;
    s.splits = 1;
    s.max_depth = depth;
    for (const Summary& c : children) {
        s.facilities += c.facilities;
        s.customers += c.customers;
        s.quadrants += c.quadrants;
        s.splits += c.splits;
        if (c.max_depth > s.max_depth) s.max_depth = c.max_depth;
        s.cost += c.cost;
        s.handled += c.handled;
    }
    s.facilities += 1;
    return s;
}

std::string describe(const Summary& s) {
    char cost[40];
    std::snprintf(cost, sizeof cost, "%.17g", s.cost);
    // Savina's root counts its own facility whether or not it opened.
    const std::uint64_t facilities = s.splits == 0 ? 1 : s.facilities;
    return "facilities=" + std::to_string(facilities) + " splits=" + std::to_string(s.splits) +
           " quadrants=" + std::to_string(s.quadrants) + " customers=" + std::to_string(s.customers) +
           " max_depth=" + std::to_string(s.max_depth) + " total_cost=" + cost;
}

// A quadrant's own state, shared by the agent and the sequential program: its facilities (the
// ancestors' and its own midpoint), its customers and their cost.
class Region {
public:
    Region(const Box& box, std::uint32_t depth, const std::vector<Point>& ancestors)
        : box_(box), depth_(depth), facilities_(ancestors) {
        facilities_.push_back(box.mid());
    }

    // Savina's addCustomer: the distance to the nearest facility it knows, added to the cost.
    void add(const Point& p) {
        customers_.push_back(p);
        double nearest = std::numeric_limits<double>::max();
        for (const Point& f : facilities_) {
            const double d = distance(f, p);
            if (d < nearest) nearest = d;
        }
        cost_ += nearest;
    }

    // The customers its parent had, those its box holds (Savina's initCustomers).
    void take(const std::vector<Point>& parents) {
        for (const Point& p : parents)
            if (box_.contains(p)) add(p);
    }

    bool over(const Setup& s) const noexcept { return cost_ > s.threshold() && s.may_split(depth_); }

    Summary leaf() const {
        Summary s;
        s.customers = customers_.size();
        s.quadrants = 1;
        s.max_depth = depth_;
        s.cost = cost_;
        return s;
    }

    const Box& box() const noexcept { return box_; }
    std::uint32_t depth() const noexcept { return depth_; }
    const std::vector<Point>& facilities() const noexcept { return facilities_; }
    std::vector<Point>& customers() noexcept { return customers_; }

private:
    Box box_;
    std::uint32_t depth_;
    std::vector<Point> facilities_;
    std::vector<Point> customers_;
    double cost_ = 0;
};

// The sequential program: the same quadtree in one thread, each point taken down to its
// childless quadrant before the next, each split's children taking their customers in order.
struct Sequential {
    Summary summary;
    std::uint64_t forwards = 0;  // a point passed from an open quadrant to a child
};

Sequential sequential(const Setup& s, const std::vector<Point>& points) {
    struct Quad {
        Region region;
        Box boxes[4] = {};
        std::uint32_t children[4] = {0, 0, 0, 0};
        bool open = false;
    };
    std::vector<Quad> quads;
    quads.push_back({Region({0, 0, s.grid, s.grid}, 0, {})});
    std::uint64_t forwards = 0;
    for (const Point& p : points) {
        std::uint32_t q = 0;
        while (quads[q].open) {
            ++forwards;
            std::uint32_t next = q;
            for (int i = 0; i < 4; ++i)
                if (quads[q].boxes[i].contains(p)) {
                    next = quads[q].children[i];
                    break;
                }
            if (next == q) throw std::logic_error("savina_facloc: a point outside its quadrant's children");
            q = next;
        }
        quads[q].region.add(p);
        if (!quads[q].region.over(s)) continue;
        quads[q].open = true;
        split(quads[q].region.box(), quads[q].region.box().mid(), quads[q].boxes);
        const std::vector<Point> parents = std::move(quads[q].region.customers());
        quads[q].region.customers().clear();
        for (int i = 0; i < 4; ++i) {
            Region child(quads[q].boxes[i], quads[q].region.depth() + 1, quads[q].region.facilities());
            child.take(parents);
            quads[q].children[i] = std::uint32_t(quads.size());
            quads.push_back({std::move(child)});
        }
    }
    // The summaries, children before parents (a child's index is above its parent's).
    std::vector<Summary> summaries(quads.size());
    for (std::size_t q = quads.size(); q-- > 0;) {
        if (!quads[q].open) {
            summaries[q] = quads[q].region.leaf();
            continue;
        }
        Summary children[4];
        for (int i = 0; i < 4; ++i) children[i] = summaries[quads[q].children[i]];
        summaries[q] = combine(children, quads[q].region.depth());
    }
    return {summaries[0], forwards};
}

// Customer (producer -> root, parent -> child), NextCustomer (root -> producer), RequestExit
// (producer -> root, parent -> child), ConfirmExit (child -> parent).
struct Customer {
    Point point;
};
struct NextCustomer {};
struct RequestExit {
    std::uint64_t handled;  // the producer's messages, carried to the root's count
};
struct ConfirmExit {
    std::uint32_t position;
    Summary summary;
};

struct Context {
    const Setup& setup;
    DispatcherChoice& dispatchers;
    rt::Completion<Summary>& done;
};

class Quadrant final : public rt::Agent {
public:
    Quadrant(const Context& context, Quadrant* parent, std::uint32_t position, const Box& box, std::uint32_t depth,
             const std::vector<Point>& ancestors, std::shared_ptr<const std::vector<Point>> parents,
             rt::Agent* producer)
        : context_(context), parent_(parent), position_(position), region_(box, depth, ancestors),
          parents_(std::move(parents)), producer_(producer) {
        subscribe<&Quadrant::on_customer>();
        subscribe<&Quadrant::on_request_exit>();
        subscribe<&Quadrant::on_confirm_exit>();
    }

private:
    // On the quadrant's own thread, before any point its parent forwards: the parent's customers
    // that its box holds, in the parent's order (Savina's constructor, which Akka runs there).
    void on_start() override {
        if (parents_) region_.take(*parents_);
        parents_.reset();
    }

    void on_customer(const Customer& customer) {
        ++handled_;
        if (!open_) {
            region_.add(customer.point);
            if (region_.over(context_.setup)) partition();
        } else {
            int i = 0;
            while (i < 4 && !boxes_[i].contains(customer.point)) ++i;
            if (i == 4) throw std::logic_error("savina_facloc: a point outside its quadrant's children");
            rt::send<Customer>(*children_[i], customer.point);
        }
        if (producer_ != nullptr) rt::send<NextCustomer>(*producer_);
    }

    // Savina's partition: open the facility, make the four children, each given the customers.
    void partition() {
        open_ = true;
        split(region_.box(), region_.box().mid(), boxes_);
        auto customers = std::make_shared<const std::vector<Point>>(std::move(region_.customers()));
        region_.customers().clear();
        DispatcherChoice& dispatchers = context_.dispatchers;
        environment().introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            for (std::uint32_t i = 0; i < 4; ++i)
                children_[i] = &coop.make_agent_with_binder<Quadrant>(
                    dispatchers.binder(i), context_, this, i, boxes_[i], region_.depth() + 1, region_.facilities(),
                    customers, nullptr);
        });
    }

    void on_request_exit(const RequestExit& request) {
        ++handled_;
        handled_ += request.handled;
        if (!open_) {
            Summary s = region_.leaf();
            s.handled = handled_;
            report(s);
            return;
        }
        for (Quadrant* child : children_) rt::send<RequestExit>(*child, std::uint64_t{0});
    }

    void on_confirm_exit(const ConfirmExit& confirm) {
        ++handled_;
        reports_[confirm.position & 3] = confirm.summary;
        if (++confirmed_ < 4) return;
        Summary s = combine(reports_, region_.depth());
        s.handled += handled_;
        report(s);
    }

    void report(const Summary& s) {
        if (parent_ != nullptr) rt::send<ConfirmExit>(*parent_, position_, s);
        else context_.done.set(s);
    }

    const Context& context_;
    Quadrant* const parent_;
    const std::uint32_t position_;
    Region region_;
    std::shared_ptr<const std::vector<Point>> parents_;
    rt::Agent* producer_;  // the root's: it asks for the next customer
    bool open_ = false;
    Box boxes_[4] = {};
    Quadrant* children_[4] = {};
    Summary reports_[4] = {};
    std::uint32_t confirmed_ = 0;
    std::uint64_t handled_ = 0;
};

// Savina's producer: the first customer on start, the next on each NextCustomer, then
// RequestExit.
class Producer final : public rt::Agent {
public:
    Producer(const std::vector<Point>& points, Quadrant*& root) : points_(points), root_(root) {
        subscribe<&Producer::on_next>();
    }

private:
    void on_start() override { produce(); }

    void on_next(const NextCustomer&) {
        ++handled_;
        if (sent_ < points_.size()) produce();
        else rt::send<RequestExit>(*root_, handled_);
    }

    void produce() { rt::send<Customer>(*root_, points_[sent_++]); }

    const std::vector<Point>& points_;
    Quadrant*& root_;
    std::size_t sent_ = 0;
    std::uint64_t handled_ = 0;
};

Result run(const Params& params) {
    const Setup s = setup(params);
    const std::vector<Point> points = customers(s);

    MeasuredRun<Summary> run(params);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();
    const Context context{s, dispatchers, run.done()};
    Result result;

    // As Savina's runIteration: the root quadrant and the producer are made inside the phase.
    const Summary summary = run.measure(result, [&] {
        Quadrant* root = nullptr;
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            auto& producer = coop.make_agent_with_binder<Producer>(dispatchers.binder(1), points, root);
            root = &coop.make_agent_with_binder<Quadrant>(dispatchers.binder(0), context, nullptr, 0u,
                                                          Box{0, 0, s.grid, s.grid}, 0u, std::vector<Point>{},
                                                          nullptr, &producer);
        });
    });

    result.messages_processed = summary.handled;
    result.answer = describe(summary);
    result.expected = describe(savina::timed_sequential(result, [&] { return sequential(s, points); }).summary);
    return result;
}

// Per point: its Customer to the root, one more per open quadrant it is forwarded from, and a
// NextCustomer; then a RequestExit to every quadrant and a ConfirmExit from every one but the
// root. The forwards are the sequential program's (the same tree).
Expectation expect(const Params& params) {
    const Setup s = setup(params);
    const Sequential q = sequential(s, customers(s));
    return {describe(q.summary), 2 * std::uint64_t(s.points) + q.forwards + 2 * q.summary.quadrants - 1};
}

void check(const Params& params) {
    const Setup s = setup(params);
    if (!rt::find_dispatcher(params.text("dispatcher")).thread_per_agent) return;
    // The quadrants depend on the points: counted by the sequential program (the producer
    // besides), only where a thread per agent makes them matter.
    const std::uint64_t agents = 1 + sequential(s, customers(s)).summary.quadrants;
    check_thread_per_agent(kName, params, agents,
                           "points=" + std::to_string(s.points) + " (" + std::to_string(agents - 1) + " quadrants)");
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("points", 100'000, {1, 10'000'000},
                      "customers the producer sends, one per acknowledgement (Savina's NUM_POINTS)"),
        real_param("grid_size", 500.0, {1e-3, 1e9},
                   "side of the square the points lie in (Savina's GRID_SIZE); the threshold is "
                   "alpha * sqrt(2) * grid_size"),
        real_param("alpha", 2.0, {1e-6, 1e6},
                   "the threshold's factor: a quadrant splits when its cost passes alpha * sqrt(2) * "
                   "grid_size (Savina's ALPHA)"),
        integer_param("cutoff_depth", 0, {0, 64},
                      "quadrants at this depth or deeper never split; 0: no limit, as Savina's actor versions "
                      "run (their CUTOFF_DEPTH = 3 is never read)"),
        integer_param("seed", 123'456, {0, 4'294'967'295},
                      "seed of the points' SplitMix64 stream (Savina's SEED, which its actor versions leave unused)"),
    };
}

const Registration registration(Kernel{
    .name = kName,
    .summary = "a producer streams `points` customers, one per acknowledgement, into a quadtree of "
               "quadrant agents that split when their cost passes a threshold: a stream through a "
               "growing tree",
    .description =
        "Savina's benchmark 20, Online Facility Location (facloc). A producer sends the root "
        "quadrant (the grid_size square) one Customer at a time, the next when the root "
        "acknowledges (NextCustomer). A quadrant without children adds the customer and its "
        "cost, the distance to the nearest facility it knows (its ancestors' and its own "
        "midpoint); when its cost passes alpha * sqrt(2) * grid_size (and it is above "
        "cutoff_depth, if set) it opens its facility and splits: four children in a coop of "
        "their own (Savina's top left, top right, bottom left, bottom right boxes around the "
        "midpoint), each taking, on its own thread before any other message, the customers its "
        "closed box holds, in the parent's order; from then on the quadrant forwards each "
        "customer to the first child whose box holds it. After the last point the producer "
        "sends RequestExit, which open quadrants pass to their children; a quadrant without "
        "children confirms to its parent (ConfirmExit), an open one once its four have, with the "
        "facilities, customers, quadrants, splits, depth and cost of its subtree. The phase "
        "covers what Savina's clock covers less making the actor system: from before the root "
        "and the producer are made to the root's last confirmation. Messages: per point its "
        "Customer to the root, one per forward and a NextCustomer, then a RequestExit per "
        "quadrant and a ConfirmExit per quadrant but the root. The result is the same whatever "
        "the schedule: a quadrant hears only from its parent (customers, then RequestExit, in the "
        "order the parent sent them) and from its children (confirmations, combined in child "
        "order once all four are in), so by induction from the root, whose customers come in the "
        "producer's order, every quadrant handles the same customers in the same order; the "
        "total cost is the childless quadrants' costs summed child by child up the tree, bit for "
        "bit the sequential program's. The producer waits for the root's acknowledgement before "
        "each point and each point is a few distances' work, so the stream is mostly a chain of "
        "hand-offs: it is not expected to scale with threads. Differences from Savina: Savina "
        "draws the points from its PseudoRandom (nextDouble = 1/(value+1), so nearly every point "
        "lies within 1% of one corner of the grid and they repeat after 32,768), ours are "
        "uniform in the grid from SplitMix64 (seed), drawn before the phase; Savina's quadrants "
        "also tell each other of every facility opened (up to the root, to the opposite sibling, "
        "down to the children), which changes later costs at times the schedule decides, so "
        "those messages are left out and a quadrant knows only its ancestors' facilities and its "
        "own; the children take their customers on their first event (Akka runs the constructor "
        "on the child's thread); Savina's actor versions never read CUTOFF_DEPTH (3), so "
        "cutoff_depth defaults to 0, no limit; the confirmations carry the cost and the counts "
        "where Savina's carry facilities and customers; the phase ends with the root's last "
        "confirmation, not the actor system's shutdown.",
    .sources = {{"savina", "20. Online Facility Location (facloc)"}},
    .verifies = "the number of facilities, splits, quadrants, customers kept and the depth, and the "
                "total cost bit for bit, equal to the sequential program's (the same quadtree built "
                "in one thread from the same points)",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {savina::sequential_metric()},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_facloc
