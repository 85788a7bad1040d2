// cpp-httplib, as Debian's libcpp-httplib-dev ships it: the header declares, libcpp-httplib.so
// defines, and the header must see the library's build macros (CPPHTTPLIB_OPENSSL_SUPPORT, ...,
// from pkg-config's cpp-httplib.pc: CMakeLists.txt puts them on engram_serve) or its classes'
// layouts differ from the library's. Every engram file that uses httplib includes this header.
#pragma once

#include <httplib.h>
