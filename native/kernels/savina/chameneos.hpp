// What every savina_chameneos kernel (ours, caf_savina_chameneos) shares: the colours and their
// complement, the mall's and the creatures' decisions, the checks, the answer and its format, so
// that both runtimes are verified the same way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"

namespace labctl::kernels::savina_chameneos {

enum class Colour : std::uint8_t { red, yellow, blue, faded };

// Savina's rule: two creatures of one colour keep it, two of different colours both take the
// third; a faded creature stays faded.
constexpr Colour complement(Colour mine, Colour other) noexcept {
    if (mine == Colour::faded || other == Colour::faded) return Colour::faded;
    if (mine == other) return mine;
    return Colour(3 - int(mine) - int(other));  // the one of red (0), yellow (1), blue (2) left
}

// Creature i starts with colour i % 3 (red, yellow, blue), as Savina's mall colours them.
constexpr Colour initial_colour(std::uint32_t i) noexcept { return Colour(i % 3); }

// A creature's side: its colour and its meetings, and the changes it was told of that break the
// complement rule.
class Creature {
public:
    explicit Creature(std::uint32_t id) : colour_(initial_colour(id)) {}

    Colour colour() const noexcept { return colour_; }

    // Met, as the creature that was waiting, one of colour `other`: takes the complement and
    // returns it (the other is told it in a change).
    Colour meet(Colour other) noexcept {
        colour_ = complement(colour_, other);
        ++meetings_;
        return colour_;
    }

    // Told of its meeting by the one it met, which was of colour `partner_was` and is now `to`:
    // the rule is symmetric, so this one must become `to` as well.
    void change(Colour to, Colour partner_was) noexcept {
        if (complement(colour_, partner_was) != to) ++wrong_changes_;
        colour_ = to;
        ++meetings_;
    }

    std::uint64_t meetings() const noexcept { return meetings_; }
    std::uint64_t wrong_changes() const noexcept { return wrong_changes_; }

private:
    Colour colour_;
    std::uint64_t meetings_ = 0;
    std::uint64_t wrong_changes_ = 0;
};

// The mall's side: pairs the creatures' meeting requests until `meetings` meetings are made, then
// answers each request with an exit; collects each creature's report.
class Mall {
public:
    Mall(std::uint32_t creatures, std::uint64_t meetings)
        : creatures_(creatures), meetings_(meetings), reported_(creatures, false) {}

    enum class Action { wait, pair, exit };

    // Creature `id` asks to meet: it waits for a partner, is paired with `partner` (the one that
    // waited, which the mall tells), or, every meeting made, is told to exit.
    Action request(std::uint32_t id, std::uint32_t& partner) {
        ++requests_;
        if (made_ == meetings_) {
            ++exits_;
            return Action::exit;
        }
        if (!waiting_) {
            waiting_ = true;
            waiting_id_ = id;
            return Action::wait;
        }
        waiting_ = false;
        partner = waiting_id_;
        ++made_;
        return Action::pair;
    }

    // Creature `id`'s final report (its meetings, its colour, the changes it found wrong, the
    // messages it handled, its exit included); true once every creature has reported, when
    // answer() and handled() are final.
    bool report(std::uint32_t id, std::uint64_t meetings, Colour colour, std::uint64_t wrong_changes,
                std::uint64_t handled) {
        ++reports_;
        creatures_handled_ += handled;
        if (id >= creatures_ || reported_[id]) ++bad_reports_;
        else reported_[id] = true;
        counted_ += meetings;
        wrong_changes_ += wrong_changes;
        if (colour == Colour::faded) ++bad_reports_;
        else ++final_colours_[int(colour)];
        return reports_ == creatures_;
    }

    // Messages handled: the mall's requests and reports, and what the creatures reported.
    std::uint64_t handled() const noexcept { return requests_ + reports_ + creatures_handled_; }
    std::uint64_t exits() const noexcept { return exits_; }

    std::string answer() const {
        // A meeting of two colours takes one from each and gives two to the third: the
        // differences between the colours' counts stay the same modulo 3, whatever meets whom.
        std::uint64_t start[3] = {0, 0, 0};
        for (std::uint32_t i = 0; i < creatures_; ++i) ++start[int(initial_colour(i))];
        const auto mod3 = [](std::uint64_t a, std::uint64_t b) { return (a + 3 * (b + 1) - b) % 3; };
        const bool kept = mod3(final_colours_[0], final_colours_[1]) == mod3(start[0], start[1]) &&
                          mod3(final_colours_[1], final_colours_[2]) == mod3(start[1], start[2]);
        return describe(made_, requests_, exits_, counted_, reports_ - bad_reports_, wrong_changes_,
                        kept && !waiting_);
    }

    static std::string describe(std::uint64_t meetings, std::uint64_t requests, std::uint64_t exits,
                                std::uint64_t counted, std::uint64_t reports, std::uint64_t wrong_changes,
                                bool colours_kept) {
        return "meetings=" + std::to_string(meetings) + " requests=" + std::to_string(requests) +
               " exits=" + std::to_string(exits) + " counted=" + std::to_string(counted) +
               " reports=" + std::to_string(reports) + " wrong_changes=" + std::to_string(wrong_changes) +
               " colour_invariant=" + (colours_kept ? "kept" : "broken");
    }

private:
    const std::uint32_t creatures_;
    const std::uint64_t meetings_;
    bool waiting_ = false;
    std::uint32_t waiting_id_ = 0;
    std::uint64_t made_ = 0;
    std::uint64_t requests_ = 0;
    std::uint64_t exits_ = 0;
    std::uint64_t reports_ = 0;
    std::uint64_t bad_reports_ = 0;  // twice, from no creature, or faded
    std::uint64_t counted_ = 0;
    std::uint64_t creatures_handled_ = 0;
    std::uint64_t wrong_changes_ = 0;
    std::uint64_t final_colours_[3] = {0, 0, 0};
    std::vector<bool> reported_;
};

// What a correct run answers: every meeting made and counted by both its creatures, every
// creature's first request and the two after each meeting, one exit and one report per creature.
inline std::string expected(std::uint64_t creatures, std::uint64_t meetings) {
    return Mall::describe(meetings, creatures + 2 * meetings, creatures, 2 * meetings, creatures, 0, true);
}

// Messages handled: the mall's requests (creatures + 2 meetings) and reports (creatures); the
// creatures' forwarded requests (one per meeting), changes (one per meeting) and exits.
constexpr std::uint64_t messages(std::uint64_t creatures, std::uint64_t meetings) noexcept {
    return 3 * creatures + 4 * meetings;
}

inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("creatures", 100, {2, 1'000'000},
                      "chameneos creatures (Savina's numChameneos), creature i of colour i % 3; at least "
                      "2, or none would ever meet"),
        integer_param("meetings", 200'000, {0, 1'000'000'000},
                      "meetings the mall makes before it tells the creatures to exit (Savina's numMeetings)"),
    };
}

// A run's figures, once the mall has every report: the messages handled and the answer.
inline void report(Result& result, const Mall& mall, std::uint64_t creatures, std::uint64_t meetings) {
    result.messages_processed = mall.handled();
    result.answer = mall.answer();
    result.expected = expected(creatures, meetings);
}

// The messages, one protocol for ours and caf_savina_chameneos (its CAF port).

// A creature asks the mall to meet; the mall forwards the second request of a pair to the
// creature that waited.
struct Meet {
    std::uint32_t id;
    Colour colour;
};

// The creature that waited tells the other what both became, and what it was.
struct Change {
    Colour colour;
    Colour partner_was;
};

struct Exit {};

// A creature's report to the mall once told to exit.
struct Count {
    std::uint32_t id;
    std::uint64_t meetings;
    Colour colour;
    std::uint64_t wrong_changes;
    std::uint64_t handled;  // messages it handled, this exit included
};

}  // namespace labctl::kernels::savina_chameneos
