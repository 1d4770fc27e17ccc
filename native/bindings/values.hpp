// A kernel parameter's value between Python and C++, one way for every module that takes them:
// labctl._native (module.cpp) and the property tests' labctl._program (native/tests/program/).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <map>
#include <string>
#include <variant>

#include "../kernels/framework/kernel.hpp"

namespace labctl::bindings {

inline pybind11::object to_python(const kernels::Value& value) {
    return std::visit([](const auto& v) -> pybind11::object { return pybind11::cast(v); }, value);
}

// Throws ParamError, naming `kernel` and the parameter, for a value of no parameter's type.
inline kernels::Value from_python(const std::string& kernel, const std::string& name,
                                  const pybind11::handle& object) {
    namespace py = pybind11;
    // bool first: Python's bool is an int.
    if (py::isinstance<py::bool_>(object)) return object.cast<bool>();
    if (py::isinstance<py::int_>(object)) {
        try {
            return object.cast<std::int64_t>();
        } catch (const py::cast_error&) {
            throw kernels::ParamError(kernel, name, "parameter '" + name + "' is out of range: " +
                                                        py::str(object).cast<std::string>());
        }
    }
    if (py::isinstance<py::float_>(object)) return object.cast<double>();
    if (py::isinstance<py::str>(object)) return object.cast<std::string>();
    throw kernels::ParamError(kernel, name,
                              "parameter '" + name + "' has a value of type " +
                                  py::str(py::type::of(object).attr("__name__")).cast<std::string>() +
                                  "; give a number, a boolean or a string");
}

inline std::map<std::string, kernels::Value> given_values(const std::string& kernel, const pybind11::dict& values) {
    std::map<std::string, kernels::Value> given;
    for (const auto& [key, value] : values) {
        const std::string name = pybind11::str(key).cast<std::string>();
        given[name] = from_python(kernel, name, value);
    }
    return given;
}

}  // namespace labctl::bindings
