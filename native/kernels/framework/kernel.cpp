// The kernel registry, parameter resolution against the schema, and the answer check.
#include "kernel.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <thread>

#include "../../runtime/pool.hpp"
#include "studies.hpp"


namespace labctl::kernels {

namespace {

std::vector<Kernel>& mutable_registry() {
    static std::vector<Kernel> kernels;
    return kernels;
}

std::string join(const std::vector<std::string>& items) {
    std::string text;
    for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
    return text;
}

std::string number(double value) {
    if (std::nearbyint(value) == value && std::fabs(value) < 1e18)
        return std::to_string(static_cast<std::int64_t>(value));
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", value);
    return buffer;
}

std::string lowercase(std::string text) {
    for (char& c : text) c = char(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

std::optional<std::int64_t> parse_integer(std::string text) {
    std::erase(text, '_');  // 1_000_000, as Python and TOML write it
    if (!text.empty() && text[0] == '+') text.erase(0, 1);
    std::int64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc{} && end == text.data() + text.size() && !text.empty()) return value;
    // 1e6: accepted when it is a whole number.
    char* stop = nullptr;
    const double real = std::strtod(text.c_str(), &stop);
    if (!text.empty() && *stop == '\0' && std::nearbyint(real) == real && std::fabs(real) < 9e18)
        return static_cast<std::int64_t>(real);
    return std::nullopt;
}

std::optional<double> parse_real(std::string text) {
    std::erase(text, '_');
    char* stop = nullptr;
    const double value = std::strtod(text.c_str(), &stop);
    if (text.empty() || *stop != '\0' || !std::isfinite(value)) return std::nullopt;
    return value;
}

class Resolver {
public:
    explicit Resolver(const Kernel& kernel) : kernel_(kernel) {}

    [[noreturn]] void fail(const ParamSpec& spec, const std::string& message) const {
        throw ParamError(kernel_.name, spec.name, "parameter '" + spec.name + "' " + message);
    }

    std::string allowed(const ParamSpec& spec) const {
        if (!spec.choices.empty()) {
            std::vector<std::string> items;
            for (const Value& choice : spec.choices) items.push_back(to_string(choice));
            return "one of: " + join(items);
        }
        if (spec.minimum && spec.maximum)
            return std::string(type_name(spec.type)) + " from " + number(*spec.minimum) + " to " +
                   number(*spec.maximum);
        if (spec.minimum) return std::string(type_name(spec.type)) + " >= " + number(*spec.minimum);
        if (spec.type == ParamType::boolean) return "true or false";
        return std::string(type_name(spec.type));
    }

    Value coerce(const ParamSpec& spec, const Value& given) const {
        const std::string shown = to_string(given);
        Value value;
        switch (spec.type) {
        case ParamType::integer:
            if (auto* i = std::get_if<std::int64_t>(&given)) value = *i;
            else if (auto* d = std::get_if<double>(&given); d && std::nearbyint(*d) == *d && std::fabs(*d) < 9e18)
                value = static_cast<std::int64_t>(*d);
            else if (auto* s = std::get_if<std::string>(&given); s && parse_integer(*s))
                value = *parse_integer(*s);
            else fail(spec, "must be " + allowed(spec) + ", got '" + shown + "'");
            break;
        case ParamType::real:
            if (auto* i = std::get_if<std::int64_t>(&given)) value = double(*i);
            else if (auto* d = std::get_if<double>(&given)) value = *d;
            else if (auto* s = std::get_if<std::string>(&given); s && parse_real(*s)) value = *parse_real(*s);
            else fail(spec, "must be " + allowed(spec) + ", got '" + shown + "'");
            break;
        case ParamType::boolean:
            if (auto* b = std::get_if<bool>(&given)) value = *b;
            else if (auto* s = std::get_if<std::string>(&given)) {
                const std::string word = lowercase(*s);
                if (word == "true" || word == "yes" || word == "on" || word == "1") value = true;
                else if (word == "false" || word == "no" || word == "off" || word == "0") value = false;
                else fail(spec, "must be true or false, got '" + shown + "'");
            } else fail(spec, "must be true or false, got '" + shown + "'");
            break;
        case ParamType::choice:
        case ParamType::text:
            if (auto* s = std::get_if<std::string>(&given)) value = *s;
            else fail(spec, "must be " + allowed(spec) + ", got '" + shown + "'");
            break;
        }
        check_bounds(spec, value);
        if (spec.validate) {
            try {
                spec.validate(value);
            } catch (const std::invalid_argument& error) {
                fail(spec, "is invalid: " + std::string(error.what()));
            }
        }
        return value;
    }

    void check_bounds(const ParamSpec& spec, const Value& value) const {
        if (!spec.choices.empty() &&
            std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end())
            fail(spec, "must be " + allowed(spec) + ", got '" + to_string(value) + "'");
        double numeric;
        if (auto* i = std::get_if<std::int64_t>(&value)) numeric = double(*i);
        else if (auto* d = std::get_if<double>(&value)) numeric = *d;
        else return;
        // NaN fails no comparison: it is refused by name (a real given from Python may be one).
        if (std::isnan(numeric) || (spec.minimum && numeric < *spec.minimum) ||
            (spec.maximum && numeric > *spec.maximum))
            fail(spec, "must be " + allowed(spec) + ", got " + to_string(value));
    }

private:
    const Kernel& kernel_;
};

}  // namespace

std::string_view type_name(ParamType type) noexcept {
    switch (type) {
    case ParamType::integer: return "integer";
    case ParamType::real: return "number";
    case ParamType::boolean: return "boolean";
    case ParamType::choice: return "choice";
    case ParamType::text: return "text";
    }
    return "?";
}

std::string to_string(const Value& value) {
    if (auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
    if (auto* d = std::get_if<double>(&value)) return number(*d);
    if (auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
    return std::get<std::string>(value);
}

const Value& Params::at(std::string_view name) const {
    auto found = values_.find(name);
    if (found == values_.end())
        throw std::logic_error("kernel read parameter '" + std::string(name) + "' that does not apply");
    return found->second;
}
std::int64_t Params::integer(std::string_view name) const { return std::get<std::int64_t>(at(name)); }
double Params::real(std::string_view name) const { return std::get<double>(at(name)); }
bool Params::boolean(std::string_view name) const { return std::get<bool>(at(name)); }
const std::string& Params::text(std::string_view name) const { return std::get<std::string>(at(name)); }
bool Params::has(std::string_view name) const { return values_.find(name) != values_.end(); }

Registration::Registration(Kernel kernel) {
    if (kernel.runtime != "labctl" && !kernel.name.starts_with(kernel.runtime + "_"))
        throw std::logic_error("kernel " + kernel.name + " of runtime " + kernel.runtime +
                               " must be named " + kernel.runtime + "_<kernel of ours>");
    for (const Citation& citation : kernel.sources)
        if (find_study(citation.study) == nullptr)
            throw std::logic_error("kernel " + kernel.name + " cites an unknown study '" + citation.study +
                                   "' (studies.hpp)");
    // A stored sample keeps a kernel's parameters and its metrics side by side, by name: one
    // name, one figure.
    for (std::size_t i = 0; i < kernel.metrics.size(); ++i) {
        const std::string& name = kernel.metrics[i].name;
        for (std::size_t j = 0; j < i; ++j)
            if (kernel.metrics[j].name == name)
                throw std::logic_error("kernel " + kernel.name + " declares metric '" + name + "' twice");
        for (const ParamSpec& spec : kernel.params)
            if (spec.name == name)
                throw std::logic_error("kernel " + kernel.name + " declares metric '" + name +
                                       "', the name of one of its parameters");
    }
    auto& kernels = mutable_registry();
    kernels.push_back(std::move(kernel));
    std::sort(kernels.begin(), kernels.end(),
              [](const Kernel& a, const Kernel& b) { return a.name < b.name; });
}

const std::vector<Kernel>& registry() { return mutable_registry(); }

const Kernel& find_kernel(std::string_view name) {
    std::vector<std::string> names;
    for (const Kernel& kernel : registry()) {
        if (kernel.name == name) return kernel;
        names.push_back(kernel.name);
    }
    throw ParamError(std::string(name), "kernel",
                     "unknown kernel (kernels: " + join(names) + ")");
}

Params resolve(const Kernel& kernel, const std::map<std::string, Value>& given, Scope scope,
               std::map<std::string, std::string>* dropped) {
    Resolver resolver(kernel);
    std::vector<std::string> names;
    for (const ParamSpec& spec : kernel.params) names.push_back(spec.name);
    for (const auto& [name, value] : given) {
        if (std::find(names.begin(), names.end(), name) == names.end())
            throw ParamError(kernel.name, name,
                             "unknown parameter '" + name + "' (parameters: " + join(names) + ")");
    }

    std::map<std::string, Value> typed;
    for (const ParamSpec& spec : kernel.params) {
        auto found = given.find(spec.name);
        typed[spec.name] = found != given.end() ? resolver.coerce(spec, found->second) : spec.default_value;
    }

    std::string dispatcher;
    if (auto found = typed.find("dispatcher"); found != typed.end())
        dispatcher = std::get<std::string>(found->second);
    for (const ParamSpec& spec : kernel.params) {
        if (given.count(spec.name)) continue;
        for (const auto& [owner, value] : spec.default_for)
            if (owner == dispatcher) typed[spec.name] = value;
    }

    Params params;
    for (const ParamSpec& spec : kernel.params) {
        const bool applies = scope == Scope::none || spec.applies_to.empty() ||
                             std::find(spec.applies_to.begin(), spec.applies_to.end(), dispatcher) !=
                                 spec.applies_to.end();
        if (applies) {
            params.values_[spec.name] = typed[spec.name];
        } else if (given.count(spec.name)) {
            const std::string why = "does not apply to dispatcher '" + dispatcher +
                                    "' (allowed with: " + join(spec.applies_to) + ")";
            if (scope != Scope::drop) throw ParamError(kernel.name, spec.name, "parameter '" + spec.name + "' " + why);
            if (dropped != nullptr) (*dropped)[spec.name] = why;
        }
    }
    if (kernel.check) kernel.check(params);
    return params;
}

std::string describe_messages(const Expectation& expectation) {
    const std::string fewest = std::to_string(expectation.messages);
    if (!expectation.messages_most) return "at least " + fewest;
    if (*expectation.messages_most <= expectation.messages) return fewest;
    return fewest + " to " + std::to_string(*expectation.messages_most);
}

bool allows_messages(const Expectation& expectation, std::uint64_t messages) noexcept {
    if (messages < expectation.messages) return false;
    if (!expectation.messages_most) return true;
    return messages <= std::max(expectation.messages, *expectation.messages_most);
}

double work(const Kernel& kernel, const Params& params) {
    if (kernel.work != nullptr) return kernel.work(params);
    if (kernel.expect != nullptr) return double(kernel.expect(params).messages);
    return 0;
}

double memory(const Kernel& kernel, const Params& params) {
    return kernel.memory != nullptr ? kernel.memory(params) : 0;
}

namespace {

// About 80M instructions a call, which the measured phase must not see.
void work_outside_the_phase() {
    volatile std::uint64_t sink = 0;
    for (std::uint64_t i = 0; i < 20'000'000; ++i) sink = sink + i;
}

// Every metric `result` holds is one `kernel` declares, and none is there twice: a figure the
// catalogue does not list could never be asked for, and one an experiment asks for must be
// there when the run's parameters say so.
void check_metrics(const Kernel& kernel, const Result& result) {
    std::vector<std::string> declared;
    for (const MetricSpec& spec : kernel.metrics) declared.push_back(spec.name);
    for (std::size_t i = 0; i < result.metrics.size(); ++i) {
        const std::string& name = result.metrics[i].name;
        if (std::find(declared.begin(), declared.end(), name) == declared.end())
            throw std::logic_error(kernel.name + ": recorded metric '" + name + "', which it does not declare (" +
                                   (declared.empty() ? std::string("it declares none") : "declared: " + join(declared)) +
                                   ")");
        for (std::size_t j = 0; j < i; ++j)
            if (result.metrics[j].name == name)
                throw std::logic_error(kernel.name + ": recorded metric '" + name + "' twice");
    }
}

}  // namespace

Result run(const Kernel& kernel, const Params& params, Fault fault) {
    if (fault == Fault::outside_work) work_outside_the_phase();
    if (fault == Fault::crash) {
        std::signal(SIGSEGV, SIG_DFL);
        std::raise(SIGSEGV);
    }
    if (fault == Fault::hang)
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    Result result = kernel.run(params);
    // The kernel's threads are gone: the next run carves fresh, ordered memory again.
    rt::pool::recycle();
    if (fault == Fault::outside_work) work_outside_the_phase();
    if (fault == Fault::wrong_answer) result.answer = "corrupted " + result.answer;
    if (fault == Fault::undeclared_metric) result.metrics.push_back({"undeclared_metric", 1});
    check_metrics(kernel, result);
    if (result.answer != result.expected)
        throw VerificationError(kernel.name + ": wrong answer: got '" + result.answer +
                                "', expected '" + result.expected + "'");
    if (kernel.expect) {  // what external programs are held to holds for the kernel itself
        const Expectation expectation = kernel.expect(params);
        if (expectation.answer != result.expected || !allows_messages(expectation, result.messages_processed))
            throw VerificationError(kernel.name + ": the run (answer '" + result.expected + "', " +
                                    std::to_string(result.messages_processed) + " messages) disagrees "
                                    "with the kernel's expectation (answer '" + expectation.answer +
                                    "', " + describe_messages(expectation) + " messages)");
    }
    return result;
}

}  // namespace labctl::kernels
