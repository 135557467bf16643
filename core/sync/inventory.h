// inventory.h: BuildInventory, the plugin inventory a peer announces over ConfigSync (the
// gateway's Hello.plugins, the controller's ServerInfo.plugins): per accepted plugin its
// identity, hash, the kinds it provides with their capabilities and the filter types it
// registered.
//
// Thread-safety: pure function over a built PluginSet.
#ifndef PORTICO_CORE_SYNC_INVENTORY_H_
#define PORTICO_CORE_SYNC_INVENTORY_H_

#include <vector>

#include "core/plugin/plugin_loader.h"
#include "portico/sync/v1/sync.pb.h"

namespace portico::core {

// BuildInventory lists the accepted plugins of `set` in file order.
std::vector<sync::v1::PluginInfo> BuildInventory(const PluginSet& set);

}  // namespace portico::core

#endif  // PORTICO_CORE_SYNC_INVENTORY_H_
