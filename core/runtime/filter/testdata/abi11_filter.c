/* abi11_filter.c: a plugin written against ABI 1.1, in plain C with no SDK, whose filter type
 * struct ends at on_response (the 1.1 layout). It proves that a 1.2 host still loads and runs a
 * 1.1 filter: its on_request stamps the request with its configuration (header x-stamp) and
 * answers 403 itself for the path "/deny"; its on_response marks the response (x-stamped). Its
 * create() refuses the configuration "refuse". */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "portico/sdk/abi.h"

__attribute__((section(".portico_manifest"), used)) static const char kManifest[] =
    "{\"name\":\"fixture-abi11-filter\",\"version\":\"0.1.0\",\"description\":\"ABI 1.1 filter\","
    "\"manifestVersion\":1,\"abi\":{\"major\":1,\"minor\":1},\"sdkVersion\":\"0.1.0\","
    "\"kinds\":[{\"group\":\"example.portico.io\",\"kind\":\"Stamp\",\"versions\":[\"v1\"],"
    "\"plural\":\"stamps\",\"capabilities\":[\"routeFilter\"],\"sync\":\"never\"}]}";

static portico_str S(const char* s) {
  portico_str r = {s, strlen(s)};
  return r;
}

/* The instance is a copy of the configuration bytes. */
typedef struct Stamp {
  size_t len;
  char text[64];
} Stamp;

static portico_code Create(void* user, portico_str config, void** instance, portico_sink* error) {
  (void)user;
  if (config.len == 8 && memcmp(config.ptr, "\"refuse\"", 8) == 0) {
    error->write(error->host, S("this stamp refuses \"refuse\""));
    return PORTICO_INVALID_ARGUMENT;
  }
  Stamp* s = (Stamp*)calloc(1, sizeof(Stamp));
  s->len = config.len < sizeof(s->text) ? config.len : sizeof(s->text);
  memcpy(s->text, config.ptr, s->len);
  *instance = s;
  return PORTICO_OK;
}

static void Destroy(void* user, void* instance) {
  (void)user;
  free(instance);
}

static portico_filter_status OnRequest(void* instance, const portico_http_view* request,
                                       const portico_filter_host* host) {
  (void)host;
  const Stamp* s = (const Stamp*)instance;
  portico_str path = request->path(request->host);
  if (path.len == 5 && memcmp(path.ptr, "/deny", 5) == 0) {
    request->respond(request->host, 403, S("stamped out"));
    return PORTICO_FILTER_RESPOND;
  }
  portico_str value = {s->text, s->len};
  request->set_header(request->host, S("x-stamp"), value);
  return PORTICO_FILTER_CONTINUE;
}

static portico_filter_status OnResponse(void* instance, const portico_http_view* response,
                                        const portico_filter_host* host) {
  (void)instance;
  (void)host;
  response->add_header(response->host, S("x-stamped"), S("1"));
  return PORTICO_FILTER_CONTINUE;
}

static portico_code Register(const portico_registrar* reg, portico_sink* error) {
  portico_kind k;
  memset(&k, 0, sizeof k);
  k.struct_size = sizeof k;
  k.group = S("example.portico.io");
  k.kind = S("Stamp");
  k.versions = S("v1");
  k.plural = S("stamps");
  k.scope = PORTICO_SCOPE_NAMESPACED;
  k.capabilities = PORTICO_CAP_ROUTE_FILTER;
  k.sync_policy = PORTICO_SYNC_NEVER;
  portico_code code = reg->add_kind(reg->host, &k, error);
  if (code != PORTICO_OK) return code;
  portico_filter_type t;
  memset(&t, 0, sizeof t);
  /* The ABI 1.1 size: everything after on_response is unknown to this plugin. */
  t.struct_size = offsetof(portico_filter_type, on_response) + sizeof(t.on_response);
  t.name = S("example.portico.io/Stamp");
  t.phase = PORTICO_PHASE_TRANSFORM;
  t.create = &Create;
  t.destroy = &Destroy;
  t.on_request = &OnRequest;
  t.on_response = &OnResponse;
  return reg->add_filter_type(reg->host, &t, error);
}

PORTICO_EXPORT const portico_plugin_v1_descriptor* portico_plugin_v1(void) {
  static const portico_plugin_v1_descriptor descriptor = {sizeof(portico_plugin_v1_descriptor),
                                                          1,
                                                          1,
                                                          {"fixture-abi11-filter", 20},
                                                          {"0.1.0", 5},
                                                          {"0.1.0", 5},
                                                          &Register};
  return &descriptor;
}
