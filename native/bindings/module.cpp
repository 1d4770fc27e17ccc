// labctl._native: the kernel catalogue, parameter resolution and kernel runs, for Python.
// The only file that includes pybind11; a kernel runs with the GIL released.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "../kernels/kernel.hpp"
#include "../kernels/program.hpp"
#include "../runtime/affinity.hpp"

namespace py = pybind11;
namespace k = labctl::kernels;

namespace {

py::object to_python(const k::Value& value) {
    return std::visit([](const auto& v) -> py::object { return py::cast(v); }, value);
}

k::Value from_python(const std::string& kernel, const std::string& name, const py::handle& object) {
    // bool first: Python's bool is an int.
    if (py::isinstance<py::bool_>(object)) return object.cast<bool>();
    if (py::isinstance<py::int_>(object)) {
        try {
            return object.cast<std::int64_t>();
        } catch (const py::cast_error&) {
            throw k::ParamError(kernel, name, "parameter '" + name + "' is out of range: " +
                                                  py::str(object).cast<std::string>());
        }
    }
    if (py::isinstance<py::float_>(object)) return object.cast<double>();
    if (py::isinstance<py::str>(object)) return object.cast<std::string>();
    throw k::ParamError(kernel, name,
                        "parameter '" + name + "' has a value of type " +
                            py::str(py::type::of(object).attr("__name__")).cast<std::string>() +
                            "; give a number, a boolean or a string");
}

std::map<std::string, k::Value> given_values(const std::string& kernel, const py::dict& values) {
    std::map<std::string, k::Value> given;
    for (const auto& [key, value] : values) {
        const std::string name = py::str(key).cast<std::string>();
        given[name] = from_python(kernel, name, value);
    }
    return given;
}

k::Params resolve(const k::Kernel& kernel, const py::dict& values, k::Scope scope = k::Scope::dispatcher) {
    return k::resolve(kernel, given_values(kernel.name, values), scope);
}

k::Scope parse_scope(bool scoped) { return scoped ? k::Scope::dispatcher : k::Scope::none; }

py::dict params_dict(const k::Kernel& kernel, const k::Params& params) {
    py::dict result;
    // Every parameter of the schema, in its order; those that do not apply are None.
    for (const k::ParamSpec& spec : kernel.params) {
        auto found = params.values().find(spec.name);
        result[py::str(spec.name)] = found != params.values().end() ? to_python(found->second) : py::none();
    }
    return result;
}

py::dict describe(const k::Kernel& kernel) {
    py::list params;
    for (const k::ParamSpec& spec : kernel.params) {
        py::dict p;
        p["name"] = spec.name;
        p["type"] = std::string(k::type_name(spec.type));
        p["default"] = to_python(spec.default_value);
        p["help"] = spec.help;
        p["minimum"] = spec.minimum ? py::cast(*spec.minimum) : py::none();
        p["maximum"] = spec.maximum ? py::cast(*spec.maximum) : py::none();
        py::list choices;
        for (const k::Value& choice : spec.choices) choices.append(to_python(choice));
        p["choices"] = choices;
        p["applies_to"] = spec.applies_to;
        params.append(p);
    }
    py::dict d;
    d["name"] = kernel.name;
    d["summary"] = kernel.summary;
    d["description"] = kernel.description;
    d["source"] = kernel.source;
    d["verifies"] = kernel.verifies;
    d["params"] = params;
    d["runtime"] = kernel.runtime;
    d["expects"] = kernel.expect != nullptr;
    return d;
}

k::Fault parse_fault(const std::string& fault) {
    if (fault.empty() || fault == "none") return k::Fault::none;
    if (fault == "wrong_answer") return k::Fault::wrong_answer;
    if (fault == "crash") return k::Fault::crash;
    if (fault == "hang") return k::Fault::hang;
    throw std::invalid_argument("fault must be one of: none, wrong_answer, crash, hang; got '" + fault + "'");
}

}  // namespace

PYBIND11_MODULE(_native, m) {
    m.doc() = "labctl's actor runtime and benchmark kernels";

    static py::exception<k::ParamError> param_error(m, "ParamError", PyExc_ValueError);
    static py::exception<k::VerificationError> verification_error(m, "VerificationError",
                                                                   PyExc_RuntimeError);
    py::register_exception_translator([](std::exception_ptr error) {
        try {
            if (error) std::rethrow_exception(error);
        } catch (const k::ParamError& e) {
            py::object type = py::reinterpret_borrow<py::object>(param_error.ptr());
            py::object instance = type(e.what());
            instance.attr("kernel") = e.kernel();
            instance.attr("param") = e.param();
            PyErr_SetObject(param_error.ptr(), instance.ptr());
        } catch (const k::VerificationError& e) {
            PyErr_SetString(verification_error.ptr(), e.what());
        }
    });

    m.def("kernels", [] {
        py::list result;
        for (const k::Kernel& kernel : k::registry()) result.append(describe(kernel));
        return result;
    }, "The kernel catalogue: name, texts and parameter schema of each kernel.");

    m.def("validate", [](const std::string& name, const py::dict& values, bool scoped) {
        const k::Kernel& kernel = k::find_kernel(name);
        return params_dict(kernel, resolve(kernel, values, parse_scope(scoped)));
    }, py::arg("kernel"), py::arg("params"), py::arg("scoped") = true,
       "Resolves parameters against the kernel's schema: typed, defaults filled in, those that do "
       "not apply to the dispatcher None (unless scoped is false). Raises ParamError.");

    m.def("expect", [](const std::string& name, const py::dict& values) {
        const k::Kernel& kernel = k::find_kernel(name);
        if (kernel.expect == nullptr)
            throw std::invalid_argument(kernel.name + " states no expectation: only its own run can verify it");
        const k::Expectation expectation = kernel.expect(resolve(kernel, values, k::Scope::none));
        py::dict d;
        d["answer"] = expectation.answer;
        d["messages"] = expectation.messages;
        return d;
    }, py::arg("kernel"), py::arg("params"),
       "The answer and message count a correct run must report, from the parameters alone (not "
       "scoped by dispatcher): what an external program implementing the kernel is held to. "
       "Raises ParamError.");

    m.def("run", [](const std::string& name, const py::dict& values, const std::string& fault) {
        const k::Kernel& kernel = k::find_kernel(name);
        const k::Params params = resolve(kernel, values);
        const k::Fault injected = parse_fault(fault);
        k::Result result;
        {
            py::gil_scoped_release released;
            result = k::run(kernel, params, injected);
        }
        py::dict metrics;
        for (const k::Metric& metric : result.metrics) metrics[py::str(metric.name)] = metric.value;
        py::dict d;
        d["kernel"] = kernel.name;
        d["params"] = params_dict(kernel, params);
        d["elapsed_ns"] = result.elapsed_ns;
        d["messages_processed"] = result.messages_processed;
        d["answer"] = result.answer;
        d["expected"] = result.expected;
        d["verified"] = result.answer == result.expected;
        d["metrics"] = metrics;
        d["thread_cpu_ns"] = result.thread_cpu_ns;
        return d;
    }, py::arg("kernel"), py::arg("params"), py::arg("fault") = "none",
       "Runs a kernel once and returns its sample. Raises ParamError for bad parameters and "
       "VerificationError if the kernel's answer is wrong. `fault` is a test hook: wrong_answer, "
       "crash or hang.");

    m.def("run_program", [](const py::dict& values, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& agents,
                            const std::vector<std::vector<std::uint32_t>>& subscribers,
                            const std::vector<std::vector<std::vector<std::uint32_t>>>& senders, double timeout_s) {
        k::Program program;
        for (const auto& [coop, group] : agents) program.agents.push_back({coop, group});
        program.subscribers = subscribers;
        program.senders = senders;
        program.timeout_s = timeout_s;
        const auto given = given_values("program", values);
        k::ProgramLog log;
        {
            py::gil_scoped_release released;
            log = k::run_program(program, given);
        }
        py::list received, sent;
        for (const auto& deliveries : log.received) {
            py::list l;
            for (const auto& d : deliveries) l.append(py::make_tuple(d.from, d.channel, d.message, d.step));
            received.append(l);
        }
        for (const auto& sends : log.sent) {
            py::list l;
            for (const auto& s : sends) l.append(py::make_tuple(s.target, s.message, s.step));
            sent.append(l);
        }
        py::dict d;
        d["received"] = received;
        d["sent"] = sent;
        d["dropped"] = log.dropped;
        return d;
    }, py::arg("params"), py::arg("agents"), py::arg("subscribers"), py::arg("senders"),
       py::arg("timeout_s") = 10.0,
       "For property tests: runs a scripted program (native/kernels/program.hpp) on the dispatcher "
       "`params` describe. agents: (coop, group) per agent; subscribers: the agents on each named "
       "mbox; senders: per external thread, its routes (targets: agents, then mboxes). Returns "
       "received[agent] = [(from, channel, message, step)], sent[agent or agents+sender] = "
       "[(target, message, step)] and dropped.");

    m.def("allowed_cpus", &labctl::rt::allowed_cpus, "The CPUs this process may run on.");

    m.def("build_info", [] {
        py::dict d;
        d["compiler"] = std::string(LABCTL_COMPILER);
        d["flags"] = std::string(LABCTL_CXX_FLAGS);
        d["build_type"] = std::string(LABCTL_BUILD_TYPE);
        // Why the kernels on CAF are not built in; empty when they are.
        d["caf_missing"] = std::string(LABCTL_CAF_MISSING);
        // The kernels on CAF the sources define, built in or not.
        d["caf_kernels"] = std::string(LABCTL_CAF_KERNELS);
        return d;
    }, "How this extension was compiled.");
}
