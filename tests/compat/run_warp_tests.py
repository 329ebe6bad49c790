#!/usr/bin/env python3
"""Run Warp 1.19's own unit tests against weft on the CPU, with ``warp`` aliased to weft.

warp-lang is needed only as the source of the test files (``warp/tests`` of an installation: pass
``--warp-tests DIR``, set ``WARP_TESTS_DIR``, or have ``/opt/warp119`` or an importable ``warp`` package).
Every module runs in its own child process (``--module-timeout``), every test under a per-test timeout
(``--timeout``); a module that does not import counts all of its tests as failed.

    python tests/compat/run_warp_tests.py                      # all in-scope modules
    python tests/compat/run_warp_tests.py test_vec matrix/     # a subset (substring match on module paths)
    python tests/compat/run_warp_tests.py --reference /opt/warp119/bin/python --save base.json   # Warp itself

The table prints per module: tests, passed, failed, skipped, and the failure classes with counts. With a
baseline of Warp's own CPU results (``--baseline``, default ``warp119_cpu_baseline.json`` next to this file)
the headline is the share of tests that pass on Warp's CPU backend which also pass on weft.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BASELINE = os.path.join(HERE, "warp119_cpu_baseline.json")

# Modules that test Warp's private internals, each with the reason. Everything else is in scope: kernel and
# function redefinition (test_codegen_instancing), reloading (test_reload), transient and unique modules,
# block_dim dispatch and deterministic mode are public behaviour and are run.
OUT_OF_SCOPE = {
    "test_allocation_tracker": "Warp's allocator bookkeeping (warp._src.context internals)",
    "test_allocator": "Warp's custom CUDA/host allocator plumbing (warp._src internals)",
    "test_apic": "APIC: Warp's CPU graph-capture serialization format (private)",
    "test_apic_load_from_bytes": "APIC: Warp's capture serialization format (private)",
    "test_apic_mesh": "APIC: Warp's capture serialization format (private)",
    "test_apic_utility_algorithms": "APIC: Warp's capture serialization format (private)",
    "test_core_library_binary": "Warp's shared-library binary (warp.so symbols and build)",
    "test_cpu_block_codegen": "Warp's CPU block-codegen internals (generated source text)",
    "test_cpu_precompiled_headers": "Warp's precompiled-header build option",
    "test_cpu_vectorization": "Warp's CPU vectorisation compiler options and generated code",
    "test_external_build": "building Warp's native library externally",
    "test_fast_math": "PTX approximations under Warp's fast-math option (CUDA codegen; its CPU tests check the option "
                      "plumbing only)",
    "test_kernel_cache": "Warp's own kernel-cache files and layout",
    "test_logger": "Warp's private logger (warp._src.logger)",
    "test_module_contamination": "Warp's bookkeeping of failed module builds (its registry and native loader)",
    "test_module_hashing": "Warp's module content hashes",
    "test_module_parallel_load": "Warp's module loader threading",
    "test_module_variants": "symbol names of Warp's generated helper variants in its native modules",
    "test_modules_lite": "Warp's bundled-module compilation of warp.sim/fem internals",
    "test_options": "Warp's module/compiler option plumbing",
    "test_template_launch_bounds": "Warp's CUDA launch-bounds codegen template",
    "test_version": "the warp-lang package version string",
    "test_examples": "runs Warp's example scripts as subprocesses (measured separately in the report)",
    "test_builtins_resolution": "Warp's internal builtin resolution tables (warp._src.context.builtin_functions)",
    "test_compilation": "Warp's compiler-invocation options",
    "test_sanitize": "Warp's compute-sanitizer integration",
    "test_diagnostics": "Warp's native diagnostic channel",
    "test_cuda_profiler": "Warp's CUDA profiler hooks",
    "unittest_serial": "Warp's test driver",
    "run_coverage_serial": "Warp's test driver",
    "fem/": "warp.fem (finite elements) is not part of weft (issue 16 lists top-level, types, utils, autograd, "
            "optim, sparse)",
    "cuda/": "CUDA-only features (streams, graphs, mempools, peer access, IPC, textures, occupancy): Warp skips "
             "their tests on the CPU",
    "aot/": "Warp's ahead-of-time module compilation",
}


# Single tests of in-scope modules that exercise Warp's private internals, keyed "module::test method", with the
# reason. They are not run (a test that dereferences Warp's native handles as C structs crashes any other
# implementation's process) and are left out of the Warp-relative rate; the per-module table counts them as skipped.
_HASH = ("checks Warp's module content hash (Module.hash_module / get_module_hash); weft keys its kernel cache by the "
         "generated source and recompiles when a constant or function changes (test_reload, test_codegen_instancing "
         "check that behaviour)")
_CODEGEN = ("inspects Warp's generated C++ source or its code generator (Module.resolve_options, ModuleBuilder, "
            "ModuleBuildOptions, codegen.Adjoint, Kernel.adj's source/blocks/references); weft's generated code and "
            "compiler are its own")
_TRANSFORMERS = "Warp's private Kernel(code_transformers=) hook that rewrites the kernel's AST before its code generator"
_SUBCLASS_CTYPE = ("compares or passes Warp's ctypes array descriptors (array.__ctype__(), a struct's __ctype__, the "
                   "bytes of warp._src.context.pack_arg); weft's descriptors have their own layout and are not ctypes")
_SUBCLASS_INFER = ("calls Warp's argument-type inference (warp._src.types.infer_argument_types, "
                   "Kernel.infer_argument_types, codegen.get_arg_type); weft infers launch types in its own "
                   "specialisation (weft/kernel.py)")
_SUBCLASS_FAMILY = ("patches or calls Warp's private array-family resolution (_resolve_array_family, "
                    "_normalize_array_argument_type) to count how often its fast paths run")
_SUBCLASS_OVERLOADS = ("reads Warp's specialisation bookkeeping (Kernel.overloads, Func.user_overloads, "
                       "Module.hash_module, Kernel.adj argument types); weft caches specialisations by its own keys")
OUT_OF_SCOPE_TESTS = {
    "geometry/test_bvh::test_sah_depth_fits_query_stack": "reads bvh.id as a pointer to Warp's C++ BVH struct "
                                                          "through ctypes (weft ids are handles: the read segfaults)",
    **{f"geometry/test_mesh::{t}": ("simulates a failing C call of Warp's native library: patches "
                                    "runtime.core.wp_mesh_*_host/_device and runtime.get_error_string, or builds a Mesh "
                                    "with __new__ and mocks its private runtime and _points")
       for t in ("test_mesh_create_raises_on_native_failure", "test_mesh_refit_raises_on_native_device_failure",
                 "test_mesh_points_setter_raises_on_native_device_failure")},
    "geometry/test_volume_validation::test_volume_rejects_missing_feature_name": (
        "builds a Volume with __new__, replaces its private runtime with a fake native core "
        "(wp_volume_get_blind_data_info) and patches the private Volume._decode_nvdb_name"),
    "test_cpu_block_dim::test_address_sanitizer_gate_precedes_compilation": (
        "patches Warp's private runtime.clang_sanitizer (its Clang AddressSanitizer build mode, which weft's g++ "
        "toolchain does not have) and reads Module.execs"),
    "test_struct::test_struct_array_gc_replacement_clears_grad_keepalive": (
        "reads the private keep-alive attribute _<field>_grad Warp's struct instances hold for an array field's "
        "gradient (weft's struct instances keep only the field)"),
    "test_array_subclass::test_fem_cache": "uses warp.fem (Warp's finite-element toolkit, not part of weft; the "
                                           "runner's warp.fem stand-in only lets the module import)",
    # Warp's module hashing
    **{f"test_static::{t}": _HASH for t in ("test_static_builtin_function_hash", "test_static_constant_hash",
                                             "test_static_function_hash")},
    **{f"test_compile_consts::{t}": _HASH for t in ("test_hash_redefine_constant_only", "test_hash_redefine_kernel",
                                                     "test_hash_shadowed_var")},
    **{f"test_func_parameter_targets::test_function_{t}_affects_module_hash": _HASH
       for t in ("argument_target", "builtin_argument_target", "dynamic_overload_target", "grad_target",
                 "overload_target")},
    "test_struct::test_struct_array_hash": _HASH,
    "test_unique_module::test_global_deterministic_captured_at_module_creation": _HASH,
    "tile/test_tile_matmul::test_tile_matmul_tf32_compilation": _HASH,
    # Warp's code generator and generated source
    **{f"test_codegen::{t}": _CODEGEN for t in (
        "test_external_constant_params_entry_point", "test_kernel_name_preserves_warp_kernel_abi",
        "test_max_unroll_uses_range_trip_count", "test_module_enable_backward_controls_function_adjoint_codegen",
        "test_namespaced_tid_call_sets_kernel_dim", "test_empty_constant_loop_does_not_hide_outer_mutation",
        "test_backend_specific_include_dirs_affect_module_hash", "test_extra_cpu_preamble_follows_warp_headers",
        "test_extra_cuda_preamble_affects_module_hash", "test_extra_cuda_preamble_follows_warp_headers",
        "test_module_build_options_with_kernel_module_options", "test_direct_tid_reference_scan_avoids_fallback_scans",
        "test_line_directive_escapes_filename", "test_line_directive_preserves_normalized_path",
        "test_replace_static_expressions_defers_loop_var_reference",
        "test_replace_static_expressions_substitutes_calls_in_view", "test_assign_static_function_to_local",
        "test_rebind_observed_through_shared_source", "test_recompiled_equal_code_object_reextracts",
        "test_shared_source_across_redeclarations", "test_adjoint_recovers_from_truncated_fast_extract")},
    **{f"test_static::{t}": _CODEGEN for t in (
        "test_static_deferred_outer_resolvable_inner", "test_static_failure_divergence_on_shared_tree",
        "test_static_function_in_while_after_unrolled_loop", "test_static_loop_bound_emits_no_dead_constant",
        "test_static_unary_minus_literal_fold")},
    **{f"test_static::{t}": _TRANSFORMERS for t in (
        "test_static_transformer_callee_attribute_kept", "test_static_transformer_reused_call_deferred_and_eager",
        "test_static_transformer_reused_call_eager")},
    **{f"test_codegen::{t}": ("calls Warp's private source extraction (codegen.Adjoint.extract_function_source, "
                              "_try_extract_function_source, extract_lambda_source and their shared-source cache "
                              "_SharedFunctionSource/_store_shared_source); weft reads a function's source its own way "
                              "(weft/frontend/source.py)")
       for t in ("test_extract_function_source_fast_path_patterns",
                 "test_extract_function_source_refreshes_stale_linecache",
                 "test_extract_function_source_rejects_non_function_fast_slice",
                 "test_extract_function_source_slow_path_when_fast_returns_none",
                 "test_extract_function_source_unwraps_like_inspect",
                 "test_extract_lambda_source_parenthesized_multiline_body",
                 "test_shared_source_evicted_on_code_object_death", "test_shared_source_lookup_requires_identity")},
    **{f"test_codegen::{t}": _CODEGEN for t in ("test_substitute_nodes_one_frame_per_level",
                                                "test_is_tid_call_requires_warp_receiver")},
    "test_codegen::test_get_arg_type_preserves_any": _SUBCLASS_INFER,
    "test_codegen::test_grid_stride_precedence": ("calls Warp's private codegen.resolve_grid_stride (how its CUDA code "
                                                  "generator chooses grid-stride loops) and reads Kernel.grid_stride"),
    "test_codegen_instancing::test_create_kernel_loop_hooks_bounded": ("counts entries of Warp's per-module native "
                                                                       "entry-point cache (ModuleExec.kernel_hooks); "
                                                                       "weft has no such cache"),
    "test_codegen_continue::test_unrolling_policy": _CODEGEN,
    "test_conditional::test_branch_local_merge_codegen": _CODEGEN,
    "test_compile_consts::test_negative_constant_codegen": _CODEGEN,
    **{f"test_func_inline::{t}": _CODEGEN for t in ("test_inline_attr_applied_to_adjoint",
                                                     "test_native_snippet_codegen_unaffected",
                                                     "test_codegen_emits_inline_attrs",
                                                     "test_inline_attr_applied_to_custom_grad_and_replay")},
    "test_func_inline::test_inline_macros_defined_in_builtin_header": ("reads Warp's native header (warp/native/"
                                                                       "builtin.h) for its WP_NOINLINE / "
                                                                       "WP_FORCEINLINE macros"),
    "tile/test_tile_matmul::test_tile_matmul_tf32_fallback": _CODEGEN,
    # test_array_subclass: tests of Warp's argument-packing internals (the public behaviour they share, launches,
    # maps, tapes and views of array subclasses, is run by that module's other tests; warp._src.context.pack_arg is
    # shimmed on weft's packer, so tests that only call it run)
    **{f"test_array_subclass::{t}": _SUBCLASS_CTYPE for t in (
        "test_annotation_values_do_not_modify_struct_fields", "test_class_reassignment", "test_null_arrays",
        "test_struct_descriptor_errors", "test_descriptor_validation")},
    "test_array_subclass::test_annotation_values_are_not_packed": "iterates Warp's wp.config.LaunchArrayAccessMode "
                                                                 "(its launch-time array-access checking modes, an "
                                                                 "option weft does not have) around pack_arg",
    **{f"test_array_subclass::{t}": _SUBCLASS_INFER for t in (
        "test_annotations_are_not_runtime_values", "test_custom_metaclasses_use_real_family_identity",
        "test_family_resolution_does_not_retain_dynamic_classes", "test_inference_describes_without_constructing",
        "test_parent_and_subclass_share_one_type", "test_shared_explicit_overload", "test_cross_family_inheritance",
        "test_annotation_discovery_keeps_runtime_values", "test_fixedarray_remains_a_distinct_compiler_type")},
    **{f"test_array_subclass::{t}": _SUBCLASS_FAMILY for t in (
        "test_exact_launch_packing_keeps_fast_path", "test_exact_struct_fields_keep_fast_path",
        "test_scalar_function_calls_keep_fast_path", "test_mock_and_weak_proxies_are_not_array_subclasses",
        "test_generic_launch_skips_descriptor_normalization")},
    **{f"test_array_subclass::{t}": _SUBCLASS_OVERLOADS for t in (
        "test_fixedarray_host_values_leave_overloads_unchanged", "test_fixedarray_subclass_source_annotations",
        "test_function_overloads", "test_shared_specialization", "test_subprocess_cache", "test_views")},
    "test_generics::test_eager_generic_func_does_not_retain_array": _SUBCLASS_OVERLOADS,
    "test_func_parameter_targets::test_function_parameter_python_scope_argument_count_mismatch": (
        "patches Warp's Function.get_overload (its overload resolution) to return an overload of another arity "
        "and checks the consistency error Warp's Python-scope call path then raises"),
    "test_tape::test_tape_copy_adjoint_fallback_warning": "patches warp._src.context.log_warning (Warp's private "
                                                           "warning helper) and checks the arguments Warp passes it "
                                                           "(stacklevel=5, once=True); weft warns with warnings.warn "
                                                           "(UserWarning, tests/runtime/test_tape_copy.py)",
    "test_devices::test_devices_unmap_cuda_device_clears_access_caches": "fills Warp's private runtime tables "
                                                                          "(device_map, context_map, the peer and "
                                                                          "mempool access caches) with fake devices "
                                                                          "and inspects them",
    **{f"deterministic/test_deterministic_options::{t}": (
        "Warp's deterministic-mode internals: Module.resolve_options / adj.build / adj.det_meta (its compile "
        "metadata), warp._src.deterministic's scatter buffers and record counts, its native deterministic.cu source")
       for t in ("test_metadata_refresh_struct_tile_stack", "test_config_deterministic_max_records_default",
                 "test_deterministic_enum_parity", "test_run_sort_reduce_uses_emitted_record_count",
                 "test_scatter_record_count_capture_uses_capacity", "test_scatter_capacity_overflow_rejected")},
    "deterministic/test_deterministic_scatter::test_overlap_check_matrix_blocks": (
        "calls warp._src.deterministic._deterministic_arrays_overlap (the private overlap test of Warp's deferred "
        "scatters)"),
    **{f"test_context::{t}": (
        "calls warp._src.context._validate_cuda_device_arch, Warp's private check of the CUDA toolkit its own wheel was "
        "built with against a device's architecture (its message recommends Warp's CUDA 12 build); weft asks NVRTC "
        "which architectures it can target (toolchain/nvrtc.py target_arch)")
       for t in ("test_cuda_13_rejects_unsupported_device_arch", "test_cuda_13_accepts_minimum_device_arch",
                 "test_cuda_12_accepts_older_device_arch", "test_unknown_cuda_toolkit_accepts_device_arch")},
    **{f"test_context::{t}": (
        "Warp's generated-symbol naming internals: Kernel.get_mangled_name / _mangled_name, Module._set_strip_hash, "
        "module.execs and warp._src.codegen._codegen_lock")
       for t in ("test_kernel_mangled_name_cache", "test_kernel_mangled_name_cache_is_synchronized")},
    "test_graph::test_cuda_graph_memory_bindings": "checks the ctypes signatures of Warp's native library entry "
                                                    "points (wp_cuda_device_get_graph_mem_current, "
                                                    "wp_cuda_device_graph_mem_trim)",
    "test_types::test_types_equal_generic_rejects_invalid_ellipsis_pattern": "calls Warp's private "
                                                                              "warp._src.types.types_equal_generic "
                                                                              "(its overload matcher's helper)",
    "test_array_subclass::test_apic_descriptors": "APIC: Warp's CPU graph-capture serialization of array descriptors "
                                                  "(private, as the test_apic modules)",
    **{f"test_coloring::{t}": "calls Warp's native library entry points (runtime.core.wp_graph_coloring, "
                              "wp_balance_coloring, wp_init) and reads its native error string directly"
       for t in ("test_coloring_native_rejects_invalid_edge_shapes", "test_coloring_native_failures_replace_error_string",
                 "test_coloring_balance_native_rejects_negative_max_iterations",
                 "test_coloring_balance_native_rejects_negative_num_nodes")},
    # tiles, sparse, solvers (compat4, session 7)
    **{f"tile/test_tile_matmul::{t}": ("calls Warp's private MathDx build helpers (warp._src.build: the operand "
                                       "alignments, architecture mapping and LTO targets it hands NVIDIA's "
                                       "cuBLASDx); weft's tile products are its own code, without MathDx")
       for t in ("test_gemm_operand_alignments", "test_mathdx_arch_mapping", "test_mathdx_sm107_lto_target")},
    "tile/test_tile_shared_memory::test_clause_none_when_request_fits": "calls Warp's private "
                                                                        "warp._src.context._smem_shortfall_clause (the "
                                                                        "wording helper of its CUDA shared-memory error)",
    "test_linear_solvers::test_batched_host_loop_per_batch_tolerance": "calls Warp's private "
                                                                       "warp._src.optim.linear._run_solver_loop (its "
                                                                       "Krylov solvers' host iteration helper)",
    "test_sparse::test_bsr_nnz_sync_transfer": "patches warp._src.sparse.log_warning / wp.copy and reads "
                                               "BsrMatrix._nnz_transfer(_pending): Warp's private pinned-memory "
                                               "read-back of the block count",
    "test_fsai::test_apply_dispatch": "patches Warp's private warp._src.optim.fsai._matvec_kernel to count which "
                                      "kernel its FSAI applies per storage type",
}
_OUT_OF_SCOPE_PREFIX = "out of scope: "

# Tests that pass on Warp only because Warp raises for something weft supports on purpose (README, "How weft differs
# from Warp"), keyed "module::test method prefix", with the reason. They run as usual and their outcome is printed, but
# they are left out of the Warp-relative rate and counted on a line of their own.
_SMALL_ATOMICS = ("Warp raises for atomics on 8/16-bit integers (and atomic min/max on float16); weft supports them on "
                  "purpose (README: 8- and 16-bit integer atomics; tests/reliability/test_atomics_matrix.py checks "
                  "the results against NumPy)")
_ASSERT_RAISES = ("a failing assert in debug mode aborts Warp's process (SIGABRT, the exit status the test expects); "
                  "weft never crashes the interpreter: the launch raises wp.RuntimeError_ naming the assert's file, "
                  "line, condition and message (README: debug checks), so the child exits with status 1")
DELIBERATE_DIFFERENCES = {
    "test_codegen::test_error_mutating_constant_in_dynamic_loop": (
        "Warp refuses a local initialised from a literal (x = 0.0) and updated in a dynamic loop, asking for "
        "x = float(0.0); weft gives the local storage of the literal's type and runs the loop as Python would "
        "(value and gradient: tests/frontend/test_kernel_decl.py; README: Python literals adapt)"),
    "test_codegen::test_overloaded_slot_update_backward_rejected": (
        "Warp refuses a differentiable augmented assignment to a vector component of an array element (a[0].x += y) "
        "through a user operator func, which it cannot differentiate; weft differentiates it (gradients of both "
        "operands exact: tests/frontend/test_kernel_decl.py; README: gradients are right or an error)"),
    "test_codegen::test_error_unmatched_arguments": (
        "Warp raises for 1 * 1.0 (int32 times float32); weft folds arithmetic on Python literals as Python does "
        "(README: Python literals adapt; mixed typed operands, such as its wp.dot(vec2f, vec2h) case, are errors)"),
    **{f"test_atomic::test_atomic_{op}_unsupported_dtypes": _SMALL_ATOMICS for op in ("add", "min", "max")},
    "tile/test_tile_reduce::test_tile_atomic_add_unsupported_dtype": _SMALL_ATOMICS,
    "matrix/test_mat::test_mat_slicing_assign_backward": (
        "Warp's gradient is wrong there: after z[0, :2] = x, z[:2, 1:] = y overwrites z[0, 1], yet Warp still gives "
        "x[1] that component's gradient (expects x.grad (1, 1)); weft gives (1, 0), which central differences confirm "
        "(README: gradients are right or an error; tests/frontend/test_component_slice_assign.py)"),
    **{f"test_assert::{t}": _ASSERT_RAISES for t in (
        "TestAssertDebug.test_basic_assert_false_condition", "TestAssertDebug.test_basic_assert_with_msg",
        "TestAssertDebug.test_compound_assert_false_condition",
        "TestAssertDebug.test_basic_assert_false_condition_function", "TestAssertModeSwitch.test_switch_to_debug_mode")},
    **{f"tile/test_tile_matmul::test_tile_matmul_bf16_{x}_with_backward_rejected": (
        "Warp raises for bfloat16 'a' / 'b' tiles in a differentiable tile_matmul; weft converts the operands to the "
        "out tile's type and differentiates the conversion (README; tests/tiles/test_tile_solve.py checks the "
        "gradients against NumPy)") for x in ("a", "b")},
    "tile/test_tile_view::test_tile_reshape_strided_view_rejected": (
        "Warp raises for tile_reshape of a strided or reversed slice (its slices alias non-contiguous storage); "
        "weft's slice reads are values, so the reshape is well defined (README, docs/tiles.md)"),
    "test_sparse::test_bsr_mm_max_new_nnz": (
        "Warp's native code prints the max_new_nnz overflow to stdout, where the test looks for it; weft reports it "
        "as a Python UserWarning (filterable, on stderr: weft's warnings go through `warnings`); the truncated "
        "product is the same (the test's block counts pass)"),
    **{f"test_graph::test_graph_{t}_cpu_rejected": (
        "Warp's CPU capture has no recording path for strided or indexed fills and strided copies and raises "
        "NotImplementedError; weft's CPU graphs record them and run them at every replay "
        "(tests/runtime/test_capture_fill.py)") for t in ("fill_noncontiguous", "fill_indexed", "copy_noncontiguous")},
    "tile/test_tile_oob::test_shared_tile": (
        "Warp aborts the process (SIGABRT) on an out-of-bounds tile index in debug mode; weft reports it as a Python "
        "exception after the launch (the process survives: nothing may crash the interpreter), naming the same "
        "coordinate, index and valid range (tests/tiles/test_errors.py)"),
    **{k: ("Warp's deterministic mode reorders atomics (sorted slot assignment, deferred scatters) and so raises "
           "WarpDeterminismError for kernels it cannot make deterministic or differentiate that way (other accesses "
           "to a counter or scatter target, backward passes of consumed counters); weft's deterministic mode runs "
           "each CPU launch on one thread in index order, where these kernels are deterministic and their "
           "gradients right (docs/autodiff.md: atomic results used)")
       for k in ("deterministic/test_deterministic_backward::test_deterministic_backward_counter_store_rejected",
                 # (runs the test above in a child process twice and expects it to pass)
                 "deterministic/test_deterministic_options::test_cpu_cache_hit_refreshes_deterministic_replay_metadata",
                 "deterministic/test_deterministic_backward::test_deterministic_custom_adjoint_consumed_counter_rejected",
                 "deterministic/test_deterministic_counter::test_counter_target_access_rejected",
                 "deterministic/test_deterministic_scatter::test_scatter_target_access_rejected")},
    **{f"test_types::{t}": (
        "weft's host scalars are NumPy scalars (wp.float32(1.25) is an np.float32 that also has Warp's .value), so "
        "they carry .dtype and np.asarray/np.array of them give the numeric dtype; Warp's are ctypes-like objects "
        "that NumPy stores as dtype=object (README: host scalars)")
       for t in ("test_numpy_dtype_metadata", "test_numpy_dtype_scalar_inference")},
    **{f"test_verify_fp::{t}": (
        "with wp.config.verify_fp Warp prints a warning for a non-finite value a kernel wrote and continues; weft "
        "raises wp.RuntimeError_ naming the kernel, the argument, the index and the value (docs/reliability.md)")
       for t in ("test_nan", "test_verify_fp_reports_composite_slot_overflow")},
    "test_func_parameter_targets::test_function_custom_grad_rejected": (
        "Warp rejects @wp.func_grad / @wp.func_replay on funcs specialised by wp.Function arguments; weft lowers them "
        "(tests/autodiff/test_custom_grad.py checks the gradient)"),
    "test_grad_debug::test_gradcheck_nan": (
        "expects gradcheck to fail on the NaN of Warp's sqrt adjoint at 0 (the length of a zero vector); weft's sqrt "
        "adjoint is 0 there, so the analytic gradient matches central differences (README)"),
    "test_print::test_print_numeric": (
        "Warp's float scalars keep the Python int they were made from (wp.float32(-1) prints -1 and its repr is "
        "float32(-1)); weft's host scalars are NumPy scalars holding the rounded float value (-1.0, float32(-1.0)); "
        "integer scalars print and repr as Warp's (int8(-1): tests/frontend/test_host_result_types.py)"),
    "geometry/test_surface_nets::test_surface_nets_matches_reference_replica": (
        "pins the SHA-256 of OpenVDB's hand-ordered edge-group table; weft generates its table (weft/geometry/"
        "surface_nets.py: the same partition of every case's edges into sheets, groups numbered by first edge, so "
        "44 cases number their sheets differently) rather than copying another project's data; only the order of a "
        "cell's vertices differs (tests/geometry test the surfaces)"),
    "test_utils::test_mesh_adjacency_error_manifold": (
        "Warp's MeshAdjacency prints 'Detected non-manifold edge' to stdout; weft is quiet by default and reports it "
        "as a Python warning (README: warp._src internals; weft's warnings go through `warnings`)"),
    "test_conditional::test_conditional_unequal_types": (
        "Warp raises TypeError for the int/bool pair in x == 10 == True, where 10 and True are locals assigned from "
        "literals; in weft such locals stay Python literals and their comparison folds as Python's (10 == True is "
        "False); typed operands of different kinds (int32 == bool) are a compile error in weft too (README: Python "
        "literals adapt)"),
    "test_runlength_encode::test_runlength_encode_error_unsupported_dtype": (
        "Warp's runlength_encode takes only int32 values and raises for others; weft's encodes values of any dtype "
        "on purpose (README: wp.utils.runlength_encode)"),
}


def deliberate_reason(mod: str, test_name: str) -> str | None:
    """Why a test is a deliberate difference from Warp (see DELIBERATE_DIFFERENCES), or None. A key's test part is a
    method prefix, or ``Class.method`` for exactly that method of that class."""
    method = test_name.rsplit(".", 1)[-1]
    qualified = ".".join(test_name.rsplit(".", 2)[-2:])
    for key, reason in DELIBERATE_DIFFERENCES.items():
        kmod, kname = key.split("::")
        if kmod != mod:
            continue
        if "." in kname:
            if qualified == kname:
                return reason
        elif method == kname or method.startswith(kname + "_"):
            return reason
    return None


def test_scope_reason(mod: str, test_id: str) -> str | None:
    """Why a single test of an in-scope module is out of scope, or None."""
    method = test_id.rsplit(".", 1)[-1]
    for key, reason in OUT_OF_SCOPE_TESTS.items():
        kmod, kname = key.split("::")
        if kmod == mod and (method == kname or method.startswith(kname + "_")):
            return reason
    return None


def find_tests_dir(explicit: str | None) -> str:
    """The ``warp/tests`` folder of a warp-lang installation."""
    candidates = [explicit, os.environ.get("WARP_TESTS_DIR")]
    candidates += sorted(glob.glob("/opt/warp119/lib/python3*/site-packages/warp/tests"))
    for c in candidates:
        if c and os.path.isfile(os.path.join(c, "unittest_utils.py")):
            return os.path.abspath(c)
    raise SystemExit("warp-lang's test files not found: pass --warp-tests DIR or set WARP_TESTS_DIR "
                     "(pip install warp-lang==1.19.0 into any environment and point at its warp/tests)")


def module_name(tests_dir: str, path: str) -> str:
    """``matrix/test_mat.py`` -> ``matrix/test_mat``."""
    return os.path.relpath(path, tests_dir)[:-3].replace(os.sep, "/")


def discover(tests_dir: str) -> list[str]:
    """Every ``test_*.py`` module under the tests folder, as relative names."""
    paths = glob.glob(os.path.join(tests_dir, "test_*.py")) + glob.glob(os.path.join(tests_dir, "*", "test_*.py"))
    return sorted(module_name(tests_dir, p) for p in paths)


def scope_reason(mod: str) -> str | None:
    """Why a module is out of scope, or None when it is in scope."""
    base = mod.rsplit("/", 1)[-1]
    if base in OUT_OF_SCOPE:
        return OUT_OF_SCOPE[base]
    for key, reason in OUT_OF_SCOPE.items():
        if key.endswith("/") and mod.startswith(key):
            return reason
    return None


def group_of(mod: str) -> str:
    """Suite group: core, matrix, tile, interop, geometry, ..."""
    return mod.split("/", 1)[0] if "/" in mod else "core"


# ----------------------------------------------------------------------------------------------- worker


def _worker(tests_dir: str, mod: str, out_path: str, timeout: float, backend: str) -> None:
    import signal
    import traceback
    import unittest

    def emit(**rec):
        with open(out_path, "a") as out:
            out.write(json.dumps(rec) + "\n")

    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    if backend == "weft":
        repo = os.path.dirname(os.path.dirname(HERE))
        sys.path.insert(0, repo)
        sys.path.insert(0, HERE)
        import warp_shim

        warp_shim.install(tests_dir)
        # child processes a test starts (``python -c "import warp ..."``) get the same alias: a ``warp`` package
        # that installs the shim, first on their path
        alias = tempfile.mkdtemp(prefix="weft-warp-alias-")
        os.makedirs(os.path.join(alias, "warp"))
        with open(os.path.join(alias, "warp", "__init__.py"), "w") as f:
            f.write(f"import sys\nsys.path.insert(0, {HERE!r})\nsys.path.insert(0, {repo!r})\n"
                    f"import warp_shim\nwarp_shim.install({tests_dir!r})\n")
        os.environ["PYTHONPATH"] = os.pathsep.join([alias, repo, os.environ.get("PYTHONPATH", "")])
    else:
        sys.path.insert(0, os.path.dirname(os.path.dirname(tests_dir)))
    dotted = "warp.tests." + mod.replace("/", ".")
    try:
        import importlib

        module = importlib.import_module(dotted)
    except BaseException as e:  # noqa: BLE001 - any import failure is a result
        emit(event="import_error", error=_classify(e), detail=traceback.format_exc()[-2000:])
        return
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    kept = []
    for t in _flatten(suite):
        reason = test_scope_reason(mod, t.id())
        if reason is None:
            kept.append(t)
        else:
            emit(test=t.id(), outcome="skip", reason=_OUT_OF_SCOPE_PREFIX + reason)
    suite = unittest.TestSuite(kept)
    if timeout <= 0:  # --import-only
        for t in _flatten(suite):
            emit(test=t.id(), outcome="skip", reason="not run (--import-only)")
        emit(event="done")
        return

    class Timeout(Exception):
        pass

    def on_alarm(signum, frame):
        raise Timeout(f"test exceeded {timeout:.0f} s")

    signal.signal(signal.SIGALRM, on_alarm)

    class Result(unittest.TestResult):
        def startTest(self, test):
            emit(event="start", test=test.id())
            signal.setitimer(signal.ITIMER_REAL, timeout)
            super().startTest(test)

        def stopTest(self, test):
            signal.setitimer(signal.ITIMER_REAL, 0)
            super().stopTest(test)

        def addSuccess(self, test):
            emit(test=test.id(), outcome="pass")

        def addError(self, test, err):
            emit(test=test.id(), outcome="fail", reason=_classify(err[1]),
                 detail="".join(traceback.format_exception(*err))[-1500:])

        addFailure = addError

        def addSkip(self, test, reason):
            emit(test=test.id(), outcome="skip", reason=str(reason)[:200])

        def addExpectedFailure(self, test, err):
            emit(test=test.id(), outcome="pass")

        def addUnexpectedSuccess(self, test):
            emit(test=test.id(), outcome="fail", reason="unexpected success")

        def addSubTest(self, test, subtest, err):
            if err is not None:
                emit(test=test.id(), outcome="fail", reason=_classify(err[1]),
                     detail="".join(traceback.format_exception(*err))[-1500:])

    suite.run(Result())
    emit(event="done")


def _flatten(suite):
    for t in suite:
        if hasattr(t, "__iter__"):
            yield from _flatten(t)
        else:
            yield t


def _classify(exc) -> str:
    """A short failure class: exception type and the first line of its message, numbers folded."""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    msg = re.sub(r"0x[0-9a-f]+", "0x?", msg)
    msg = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", msg)
    return f"{type(exc).__name__}: {msg}"[:140]


# ----------------------------------------------------------------------------------------------- driver


def run_module(python: str, tests_dir: str, mod: str, timeout: float, module_timeout: float, backend: str) -> dict:
    """Run one module in a child process; returns its per-test results."""
    fd, out_path = tempfile.mkstemp(suffix=".jsonl")
    os.close(fd)
    cmd = [python, os.path.abspath(__file__), "--worker", mod, "--warp-tests", tests_dir, "--out", out_path,
           "--timeout", str(timeout), "--backend", backend]
    t0 = time.time()
    note = ""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=module_timeout, check=False)
        if proc.returncode != 0:
            note = f"worker exited with {proc.returncode}: {proc.stderr.strip()[-300:]}"
    except subprocess.TimeoutExpired:
        note = f"module exceeded {module_timeout:.0f} s"
    with open(out_path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    os.unlink(out_path)
    tests: dict[str, dict] = {}
    import_error = None
    started = None
    done = False
    for r in records:
        if r.get("event") == "import_error":
            import_error = r["error"]
        elif r.get("event") == "start":
            started = r["test"]
        elif r.get("event") == "done":
            done = True
        elif "test" in r:
            prev = tests.get(r["test"])
            if prev is None or prev["outcome"] == "pass":
                tests[r["test"]] = {"outcome": r["outcome"], "reason": r.get("reason", "")}
                if r.get("detail"):
                    tests[r["test"]]["detail"] = r["detail"]
    done = done or import_error is not None
    if not done:
        if started and started not in tests:
            tests[started] = {"outcome": "fail", "reason": f"crashed or timed out ({note or 'no result'})"}
        import_error = import_error or (note or "worker stopped early")
    return {"module": mod, "tests": tests, "import_error": import_error, "seconds": round(time.time() - t0, 1),
            "complete": done}


def short_name(test_id: str) -> str:
    """``warp.tests.test_x.TestX.test_y_cpu`` -> ``TestX.test_y_cpu`` (the baseline's test names)."""
    return ".".join(test_id.split(".")[-2:])


def load_baseline(path: str) -> dict | None:
    """``{module: {"pass": [...], "fail": [...], "skip": [...]}}`` from a compact baseline
    (``gen_warp_baseline.py``) or from a raw ``--save`` file of a ``--reference`` run."""
    if not path or not os.path.isfile(path):
        return None
    with open(path) as f:
        data = json.load(f)
    if "modules" in data:
        return data["modules"]
    out = {}
    for mod, res in data.items():
        entry = {"pass": [], "fail": [], "skip": []}
        for test_id, t in res["tests"].items():
            entry[t["outcome"]].append(short_name(test_id))
        out[mod] = entry
    return out


def summarize(res: dict, baseline: dict | None) -> dict:
    """Counts for one module's results (tests known only from the baseline count as failed), and the share of the
    tests passing on Warp's CPU backend that pass on weft, with the failure classes among those."""
    tests = {short_name(k): v for k, v in res["tests"].items()}
    base = (baseline or {}).get(res["module"])
    base_pass = set(base["pass"]) if base else set()
    base_pass -= {n for n, t in tests.items() if t.get("reason", "").startswith(_OUT_OF_SCOPE_PREFIX)}
    deliberate = {n for n in base_pass if deliberate_reason(res["module"], n)}
    base_pass -= deliberate
    if base:
        for name in (*base["pass"], *base["fail"], *base["skip"]):
            if name not in tests:
                tests[name] = {"outcome": "fail", "reason": f"not run: {res['import_error'] or 'missing'}"}
    counts = collections.Counter(t["outcome"] for t in tests.values())
    classes = collections.Counter(t["reason"] for t in tests.values() if t["outcome"] == "fail")
    ok_of_base = sum(1 for n in base_pass if tests.get(n, {}).get("outcome") == "pass")
    base_classes = collections.Counter(tests[n]["reason"] if tests[n]["outcome"] == "fail" else "skipped on weft"
                                       for n in base_pass if tests[n]["outcome"] != "pass")
    return {"tests": len(tests), "passed": counts["pass"], "failed": counts["fail"], "skipped": counts["skip"],
            "classes": classes, "warp_pass": len(base_pass), "pass_of_warp_pass": ok_of_base,
            "base_classes": base_classes, "has_baseline": base is not None, "deliberate": len(deliberate),
            "imports": res["import_error"] is None or res["tests"] != {}}


_save_lock = __import__("threading").Lock()


def _merge_save(path: str, result: dict) -> None:
    """Merge one module's raw results into the JSON file at ``path`` (written after every module)."""
    with _save_lock:
        data = {}
        if os.path.isfile(path):
            with open(path) as f:
                data = json.load(f)
        data[result["module"]] = result
        with open(path, "w") as f:
            json.dump(data, f, indent=0, sort_keys=True)


def _rate(ok: int, n: int) -> str:
    return f"{100.0 * ok / n:5.1f}%" if n else "    -"


def report(results: list[dict], baseline: dict | None, nclasses: int, markdown: str | None) -> None:
    """Print the per-module table and the totals; with a baseline, weft's pass rate over the tests that pass on
    Warp's CPU backend (per module and overall) and, per module, the failure classes among those tests."""
    print(f"{'module':40s} {'tests':>6s} {'pass':>6s} {'fail':>6s} {'skip':>6s} {'warp-ok':>8s} {'both-ok':>8s} "
          f"{'rate':>6s}")
    tot = collections.Counter()
    rows = []
    all_base_classes = collections.Counter()
    for r in results:
        s = summarize(r, baseline)
        for k in ("tests", "passed", "failed", "skipped", "warp_pass", "pass_of_warp_pass", "deliberate"):
            tot[k] += s[k]
        tot["modules"] += 1
        tot["imported"] += bool(s["imports"])
        tot["with_baseline"] += s["has_baseline"]
        all_base_classes.update(s["base_classes"])
        base_cols = (f"{s['warp_pass']:8d} {s['pass_of_warp_pass']:8d} {_rate(s['pass_of_warp_pass'], s['warp_pass'])}"
                     if s["has_baseline"] else f"{'-':>8s} {'-':>8s} {'-':>6s}")
        print(f"{r['module']:40s} {s['tests']:6d} {s['passed']:6d} {s['failed']:6d} {s['skipped']:6d} {base_cols}"
              + ("" if r["complete"] else "  [incomplete]"))
        if r["import_error"] and not r["tests"]:
            print(f"    import: {r['import_error']}")
        shown = s["base_classes"] if s["has_baseline"] else s["classes"]
        for cls, n in shown.most_common(nclasses):
            print(f"    {n:4d} x {cls}")
        top = (shown.most_common(1)[0][0] if shown else "").replace("|", "/")[:90]
        rows.append(f"| {r['module']} | {s['tests']} | {s['passed']} | {s['failed']} | {s['skipped']} | "
                    + (f"{s['warp_pass']} | {s['pass_of_warp_pass']} | {_rate(s['pass_of_warp_pass'], s['warp_pass'])}"
                       if s["has_baseline"] else "- | - | -") + f" | {top} |")
    print(f"{'TOTAL':40s} {tot['tests']:6d} {tot['passed']:6d} {tot['failed']:6d} {tot['skipped']:6d} "
          f"{tot['warp_pass']:8d} {tot['pass_of_warp_pass']:8d} {_rate(tot['pass_of_warp_pass'], tot['warp_pass'])}")
    print(f"modules importing: {tot['imported']}/{tot['modules']}")
    if baseline is not None:
        print(f"modules with a Warp CPU baseline: {tot['with_baseline']}/{tot['modules']}")
        if tot["warp_pass"]:
            print(f"tests passing on Warp's CPU backend that pass on weft: {tot['pass_of_warp_pass']}/"
                  f"{tot['warp_pass']} = {100.0 * tot['pass_of_warp_pass'] / tot['warp_pass']:.1f}%")
            if tot["deliberate"]:
                print(f"left out of that rate: {tot['deliberate']} tests passing on Warp only because it raises for "
                      f"what weft supports on purpose (DELIBERATE_DIFFERENCES)")
            print("largest failure classes among them:")
            for cls, n in all_base_classes.most_common(12):
                print(f"    {n:4d} x {cls}")
    if markdown:
        with open(markdown, "w") as f:
            f.write("| module | tests | pass | fail | skip | Warp CPU pass | both pass | rate | top failure class |\n")
            f.write("|---|---|---|---|---|---|---|---|---|\n")
            f.write("\n".join(rows) + "\n")
            f.write(f"| **total** | {tot['tests']} | {tot['passed']} | {tot['failed']} | {tot['skipped']} | "
                    f"{tot['warp_pass']} | {tot['pass_of_warp_pass']} | "
                    f"{_rate(tot['pass_of_warp_pass'], tot['warp_pass'])} | {tot['imported']}/{tot['modules']} "
                    f"modules import |\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("patterns", nargs="*", help="substrings selecting module paths (default: all in scope); "
                    "a trailing '$' matches the whole path (tile/test_tile$)")
    ap.add_argument("--warp-tests", default=None, help="warp/tests folder of a warp-lang 1.19 installation")
    ap.add_argument("--timeout", type=float, default=120.0, help="per-test timeout in seconds")
    ap.add_argument("--module-timeout", type=float, default=1800.0, help="per-module timeout in seconds")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="modules run concurrently")
    ap.add_argument("--reference", default=None, help="run Warp itself with this Python (for a baseline)")
    ap.add_argument("--baseline", default=DEFAULT_BASELINE, help="Warp's CPU results (JSON) to compare with")
    ap.add_argument("--save", default=None, help="write the raw results to this JSON file (merged if it exists)")
    ap.add_argument("--classes", type=int, default=4, help="failure classes printed per module")
    ap.add_argument("--markdown", default=None, help="also write the per-module table as Markdown to this file")
    ap.add_argument("--from-saved", default=None, help="print the report of a saved run (--save) without running")
    ap.add_argument("--groups", default=None, help="comma-separated suite groups to run, in this order "
                    "(core, matrix, tile, interop, geometry, ...)")
    ap.add_argument("--import-only", action="store_true", help="only import the modules and count their tests")
    ap.add_argument("--progress", action="store_true", help="print each module as it finishes (stderr)")
    ap.add_argument("--all", action="store_true", help="include out-of-scope modules")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--backend", default="weft", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    tests_dir = find_tests_dir(args.warp_tests)
    if args.worker:
        _worker(tests_dir, args.worker, args.out, args.timeout, args.backend)
        return 0

    mods = discover(tests_dir)
    if args.groups:
        order = [g.strip() for g in args.groups.split(",")]
        mods = sorted((m for m in mods if group_of(m) in order), key=lambda m: order.index(group_of(m)))
    if args.patterns:
        mods = [m for m in mods if any(m == p[:-1] if p.endswith("$") else p in m for p in args.patterns)]
    skipped_scope = {m: scope_reason(m) for m in mods if scope_reason(m)}
    if not args.all:
        mods = [m for m in mods if m not in skipped_scope]
    python = args.reference or sys.executable
    backend = "warp" if args.reference else "weft"
    baseline = None if args.reference else load_baseline(args.baseline)

    from concurrent.futures import ThreadPoolExecutor

    timeout = 0.0 if args.import_only else args.timeout

    def one(m):
        r = run_module(python, tests_dir, m, timeout, args.module_timeout, backend)
        if args.save:
            _merge_save(args.save, r)
        if args.progress:
            print(f"[{m}: {len(r['tests'])} tests, {r['seconds']} s]", file=sys.stderr, flush=True)
        return r

    if args.from_saved:
        with open(args.from_saved) as f:
            saved = json.load(f)
        results = [saved[m] for m in mods if m in saved]
    else:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(one, mods))

    report(results, baseline, args.classes, args.markdown)
    if skipped_scope and not args.all:
        print("\nout of scope (Warp internals):")
        for m, why in sorted(skipped_scope.items()):
            print(f"    {m}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
