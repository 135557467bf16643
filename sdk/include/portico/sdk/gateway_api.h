// gateway_api.h: names the Gateway API plugins share: the API group and Portico's controller
// name, the GatewayClass spec.controllerName Portico answers for (route status entries carry it
// as controllerName). Header-only, std only.
// Threading: constants.
#ifndef PORTICO_SDK_GATEWAY_API_H_
#define PORTICO_SDK_GATEWAY_API_H_

namespace portico::sdk::gateway_api {

inline constexpr char kGroup[] = "gateway.networking.k8s.io";
inline constexpr char kControllerName[] = "portico.io/gateway-controller";

}  // namespace portico::sdk::gateway_api

#endif  // PORTICO_SDK_GATEWAY_API_H_
