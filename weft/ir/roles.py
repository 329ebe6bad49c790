"""What an op is to the analyses over the IR: the few ops whose meaning they must recognise (array access, thread
index, copies, element extraction) carry a :class:`Role` on their ``ops.registry.Op`` record, so analyses ask the
record, never the op's name. Every other op is an ordinary call (``Role.CALL``)."""

from __future__ import annotations

import enum


class Role(enum.Enum):
    CALL = "call"  # an ordinary computation
    TID = "tid"  # the thread index (wp.tid())
    COPY = "copy"  # a fresh copy of a value (initialises a mutable local)
    FRESH = "fresh"  # a fresh mutable object (a zeroed fixed-size array): never merged with another
    VIEW = "view"  # a view of the array operand (same memory)
    LOAD = "load"  # reads one element of the array operand
    STORE = "store"  # writes one element of the array operand
    ATOMIC = "atomic"  # read-modify-writes one element of the array operand
    TILE_LOAD = "tile_load"  # reads a tile of the array operand
    TILE_STORE = "tile_store"  # writes a tile into the array operand
    TILE_ATOMIC = "tile_atomic"  # atomically updates a tile of the array operand
    GETFIELD = "getfield"  # a field of a struct value
    SHAPE = "shape"  # an extent of the array operand (a.shape[k])
    TILE_MAP = "tile_map"  # applies the function in its first attribute to each element of its tile operands
    EXTRACT = "extract"  # a component of a vector / matrix / tile value
    INSERT = "insert"  # a value with one component replaced


#: roles that read the array operand's values / write into it / overwrite the elements they touch
READS_ARRAY = frozenset({Role.LOAD, Role.TILE_LOAD})
WRITES_ARRAY = frozenset({Role.STORE, Role.ATOMIC, Role.TILE_STORE, Role.TILE_ATOMIC})
OVERWRITES_ARRAY = frozenset({Role.STORE, Role.TILE_STORE})
