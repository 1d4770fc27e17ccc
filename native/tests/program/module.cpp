// labctl._program: scripted programs (program.hpp) for the property tests, tests/test_program.py.
// A module of its own, not in labctl._native: built where CMake's LABCTL_BUILD_TEST_EXTENSION is
// on, which pyproject.toml turns on for the editable install the tests run from, so the product a
// wheel carries has no test driver. Its errors are labctl._native's: a bad program or dispatcher
// raises labctl._native.ParamError.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "../../bindings/values.hpp"
#include "program.hpp"

namespace py = pybind11;
namespace t = labctl::testing;

PYBIND11_MODULE(_program, m) {
    m.doc() = "labctl's property-test driver: scripted programs of sends on any dispatcher (not a benchmark)";

    // The ParamError the kernels raise, labctl._native's, so that a test catches one class; a
    // reference kept for the process's life (a static py::object would be released after the
    // interpreter is gone).
    static const py::handle param_error =
        py::object(py::module_::import("labctl._native").attr("ParamError")).release();
    py::register_exception_translator([](std::exception_ptr error) {
        try {
            if (error) std::rethrow_exception(error);
        } catch (const labctl::kernels::ParamError& e) {
            py::object instance = param_error(e.what());
            instance.attr("kernel") = e.kernel();
            instance.attr("param") = e.param();
            PyErr_SetObject(param_error.ptr(), instance.ptr());
        }
    });

    m.def("run_program", [](const py::dict& values, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& agents,
                            const std::vector<std::vector<std::uint32_t>>& subscribers,
                            const std::vector<std::vector<std::vector<std::uint32_t>>>& senders, double timeout_s) {
        t::Program program;
        for (const auto& [coop, group] : agents) program.agents.push_back({coop, group});
        program.subscribers = subscribers;
        program.senders = senders;
        program.timeout_s = timeout_s;
        const auto given = labctl::bindings::given_values("program", values);
        t::ProgramLog log;
        {
            py::gil_scoped_release released;
            log = t::run_program(program, given);
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
       "Runs a scripted program (native/tests/program/program.hpp) on the dispatcher `params` "
       "describe. agents: (coop, group) per agent; subscribers: the agents on each named mbox; "
       "senders: per external thread, its routes (targets: agents, then mboxes). Returns "
       "received[agent] = [(from, channel, message, step)], sent[agent or agents+sender] = "
       "[(target, message, step)] and dropped.");
}
