// version.h: the SDK's own version, embedded into every plugin's manifest and descriptor.
#ifndef PORTICO_SDK_VERSION_H_
#define PORTICO_SDK_VERSION_H_

#define PORTICO_SDK_VERSION "0.1.0"

#endif  // PORTICO_SDK_VERSION_H_
