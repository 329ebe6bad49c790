// weft native geometry: included by the kernel modules that use a geometry op. A module finds the registry of the
// geometry library through a pointer the host sets after loading it (weft_geometry_attach on the CPU; the __device__
// variable weft_geo_registry_ptr under CUDA).
#pragma once
#include "registry.h"

#if WEFT_CUDA
__device__ const weft::geo::Registry* weft_geo_registry_ptr;
#else
static const weft::geo::Registry* weft_geo_registry_ptr = nullptr;
extern "C" __attribute__((visibility("default"))) void weft_geometry_attach(const void* registry) {
    weft_geo_registry_ptr = static_cast<const weft::geo::Registry*>(registry);
}
#endif
// queries report invalid ids through the error state: the launch reads it in release mode too
#include "release_checks.h"
namespace weft {
namespace geo {
WEFT_FN const Registry* registry() { return weft_geo_registry_ptr; }
}  // namespace geo
}  // namespace weft

#include "data.h"
#include "hashgrid.h"
#include "mesh.h"
#include "bvh_query.h"
#include "helpers.h"
#include "volume.h"
