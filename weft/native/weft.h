// weft native: umbrella header included by every generated kernel module.
#pragma once

#include "core.h"
#include "half.h"
#include "scalar.h"
#include "vec.h"
#include "mat.h"
#include "quat.h"
#include "transform.h"
#include "spatial.h"
#include "random.h"
#include "error.h"
#include "array.h"
#include "construct.h"
#include "atomic.h"
#include "stack.h"
#include "launch.h"
