# labctl_c_string(OUT VALUE): VALUE as a C++ string literal, quotes included, for a header that
# configure_file writes. Backslashes, quotes and line ends are escaped; every other character
# (a ';' in a CMake list, '(' or '$' that a shell would read) passes through as text. Text goes
# from CMake to C++ this way, never through -D definitions, which a shell splits and reads.
function(labctl_c_string out value)
  string(REPLACE "\\" "\\\\" value "${value}")
  string(REPLACE "\"" "\\\"" value "${value}")
  string(REPLACE "\r" "\\r" value "${value}")
  string(REPLACE "\n" "\\n" value "${value}")
  set(${out} "\"${value}\"" PARENT_SCOPE)
endfunction()
