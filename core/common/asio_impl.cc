// asio_impl.cc: the one translation unit compiling Boost.Asio and Boost.Beast (separate
// compilation), so the rest of the build includes their headers without their bodies.
#include <utility>  // Boost 1.74's asio needs it first with GCC 12 and C++20 (DESIGN.md §9)

#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
