# Trimmed from erfanzar/EasyDeL@3a16f00f9d5c:easydel/inference/esurge/runners/execution_manager.py (Apache-2.0); see case.toml.
from __future__ import annotations

import hashlib
import time
import typing
from collections import OrderedDict
from functools import partial

import jax
import numpy
from eformer import escale as es
from eformer.jaximus import implicit
from eformer.loggings import ProgressLogger, get_logger
from eformer.pytree import key_path_to_str
from flax import nnx as nn
from jax import numpy as jnp
from jax._src import pjit

from easydel.layers.caching import RaggedPagesCache, RaggedPagesCacheView, RaggedPagesMetadata
from easydel.utils import ejit

from ..core.sampler import sample_tokens
from ..core.sampling_metadata import SamplingMetadata
from ..page_table import PAGE_TABLE_PADDING_VAL, SLOT_MAPPING_PADDING_VAL
from .execution_types import BatchMetadata, MinimalDeviceState, ModelStepOutputs, StepFunctionInputs
from .sequence_buffer import SequenceBuffer

class ExecutionManager:
    """Compilation and execution manager for fused inference step functions.

    The ExecutionManager pre-compiles and caches fused step functions for multiple
    input configurations, enabling low-latency serving without runtime compilation.
    It uses bucketed compilation (powers of 2) to reduce the number of unique
    variants while maintaining good hardware utilization.

    Architecture:
        The manager splits the model into (graphdef, graphstate, graphother) for
        efficient functional transformations. The graphstate (weights) can be
        updated without recompilation. Compiled functions are cached in an LRU
        structure with 64-entry capacity.

    Compilation Strategy:
        Request counts are bucketed into powers of 2 (up to min_input_pad, then
        nearest power of 2 above). Token counts use explicit padding values provided
        during compile(). This produces O(log N * M) compilations for N request
        sizes and M token configurations.

    Attributes:
        model: EasyDeL model instance (EasyDeLBaseModule).
        mesh: JAX sharding mesh for distributed execution across devices.
        kv_pages: Paged KV cache storage (RaggedPagesCache).
        use_aot_forward: If True, use AOT compilation via lower().compile().
            If False, use JIT compilation on first call. Default: True.
        min_input_pad: Minimum request count padding for bucketing. Default: 8.
        max_model_len: Maximum sequence length supported by model.
        max_num_reqs: Maximum concurrent requests.
        max_num_tokens: Maximum tokens per batch (defaults to max_model_len).
        metadata: KV cache metadata (RaggedPagesCacheView).
        graphdef: Model graph definition (static structure).
        graphstate: Model graph state (weights, device-resident).
        graphother: Auxiliary model state (buffers, etc.).
        rng_key: JAX random key for sampling, threaded through steps.

    Private Attributes:
        _model_step_fn: Model-only forward function (ejit-decorated).
        _sampling_fn: Sampler/update function (ejit-decorated).
        _model_lowerd_history: OrderedDict LRU cache of compiled model functions.
        _sampler_lowerd_history: OrderedDict cache for compiled sampler function.
        _cache_capacity: Maximum cache entries (64).
        _debug_baselines: Hash baselines for debugging recompilations.
        _empty_sharding: Default sharding (replicated across mesh).

    Example:
        >>> # Initialize manager
        >>> executor = ExecutionManager(
        ...     model=model,
        ...     kv_pages=cache,
        ...     use_aot_forward=True,
        ...     min_input_pad=8,
        ...     max_model_len=8192,
        ...     max_num_reqs=32,
        ... )
        >>>
        >>> # Pre-compile for expected configurations
        >>> executor.compile(
        ...     num_tokens_paddings=[128, 256, 512, 1024, 2048],
        ...     num_reqs_max_model_len=16,
        ...     max_pages_per_req=128,
        ...     max_num_reqs=32,
        ...     metadata=cache.metadata,
        ... )
        >>>
        >>> # Execute steps during serving
        >>> results = executor.execute(
        ...     num_tokens=512,
        ...     device_state=state,
        ...     scheduled_full=scheduled,
        ...     req_num_tokens_full=req_tokens,
        ...     active_mask_full=active,
        ...     input_ids_buf=input_buf,
        ...     position_ids_buf=pos_buf,
        ...     padded_num_reqs=16,
        ... )
    """

    def execute(
        self,
        num_tokens: int,
        scheduled_full_cpu: numpy.ndarray,  # CPU array
        req_num_tokens_full: jax.Array,
        active_mask_full_cpu: numpy.ndarray,  # CPU array
        input_ids_buf: jax.Array,
        position_ids_buf: jax.Array,
        padded_num_reqs: int,
        token_ids_cpu: numpy.ndarray,
        num_computed_tokens_cpu: numpy.ndarray,
        temperature_cpu: numpy.ndarray,
        top_p_cpu: numpy.ndarray,
        top_k_cpu: numpy.ndarray,
        min_p_cpu: numpy.ndarray,
        page_table_cpu: numpy.ndarray,
    ) -> tuple[
        MinimalDeviceState,
        jax.Array,
        jax.Array,
        jax.Array,
        jax.Array,
        jax.Array,
        jax.Array,
        jax.Array,
        jax.Array,
        jax.Array,
    ]:
        """Execute a single fused inference step.

        Runs a pre-compiled fused function that combines input preparation, model
        forward pass, token sampling, and state updates in a single device dispatch.

        Args:
            num_tokens: Total tokens to process across all requests in this step.
                Must match a value from num_tokens_paddings used during compile().
            device_state: Current device-side sequence state (DeviceSequenceState).
                Contains token buffers, position tracking, and sampling parameters.
            scheduled_full: Number of tokens scheduled per request [max_num_reqs].
                Determines how many tokens from each request enter this step.
            req_num_tokens_full: Target token count per request [max_num_reqs].
                Used to determine when requests have generated enough tokens.
            active_mask_full: Boolean mask for active requests [max_num_reqs].
                Inactive requests are skipped during processing.
            input_ids_buf: Contiguous token ID buffer [max_num_tokens]. Flattened
                across requests for efficient batch processing.
            position_ids_buf: Contiguous position ID buffer [max_num_tokens].
                Parallel to input_ids_buf with position indices.
            padded_num_reqs: Bucketed request count for compilation lookup. Must
                be a power of 2 (or min_input_pad) matching a compiled variant.

        Returns:
            Tuple of 10 elements:
                - device_state: Updated sequence state with new tokens written.
                - out_tokens_full: Generated tokens [max_num_reqs], -1 for invalid.
                - valid_mask_full: Boolean mask for valid generations [max_num_reqs].
                - input_ids_buf: Updated input buffer (may contain new tokens).
                - position_ids_buf: Updated position buffer.
                - query_start_loc_buf: Query start locations [max_num_reqs+1].
                - seq_lens_buf: Sequence lengths [max_num_reqs].
                - pages_tables_buf: Page tables [num_reqs, max_pages].
                - hidden_states: Last layer hidden states [num_tokens, hidden_dim].
                - logits: Output logits [padded_num_reqs, vocab_size].

        Raises:
            KeyError: If no compiled function exists for (num_tokens, padded_num_reqs).
                This indicates the configuration wasn't included in compile() call.

        Note:
            The KV cache (self.kv_pages) and random key (self.rng_key) are updated
            in-place on self after execution completes.

        Example:
            >>> results = executor.execute(
            ...     num_tokens=256,
            ...     device_state=state,
            ...     scheduled_full=jnp.array([4, 8, 2, ...]),
            ...     req_num_tokens_full=jnp.array([512, 256, 128, ...]),
            ...     active_mask_full=jnp.array([True, True, False, ...]),
            ...     input_ids_buf=input_buf,
            ...     position_ids_buf=pos_buf,
            ...     padded_num_reqs=16,
            ... )
            >>> new_state, tokens, valid, *rest = results
        """
        model_fn, sampler_fn = self.get_compiled_key(num_tokens, padded_num_reqs)
        start_prep = time.time()
        (
            batch_metadata,
            input_ids_buf,
            position_ids_buf,
            token_ids_dev,
            num_computed_tokens_dev,
            scheduled_full,
            active_mask_full,
        ) = self.prepare_batch_metadata(
            num_tokens_static=num_tokens,
            scheduled_full_cpu=scheduled_full_cpu,
            active_mask_full_cpu=active_mask_full_cpu,
            input_ids_buf=input_ids_buf,
            position_ids_buf=position_ids_buf,
            token_ids_cpu=token_ids_cpu,
            num_computed_tokens_cpu=num_computed_tokens_cpu,
            temperature_cpu=temperature_cpu,
            top_p_cpu=top_p_cpu,
            top_k_cpu=top_k_cpu,
            min_p_cpu=min_p_cpu,
            page_table_cpu=page_table_cpu,
            padded_num_reqs_in=padded_num_reqs,
        )

        # Create minimal device state from already-transferred arrays (no separate device transfer needed)
        device_state = MinimalDeviceState(
            token_ids=token_ids_dev,
            num_tokens=num_computed_tokens_dev,
        )

        inputs = StepFunctionInputs(
            device_state=device_state,
            kv_pages=self.kv_pages,
            scheduled_full=scheduled_full,
            req_num_tokens_full=req_num_tokens_full,
            active_mask_full=active_mask_full,
            rng_key=self.rng_key,
            batch_metadata=batch_metadata,
        )
        # Only sync for timing when verbose mode is on (saves ~0.2-0.5ms in production)
        if self._verbose:
            inputs = jax.block_until_ready(inputs)
        prep_took = time.time() - start_prep
        if DEBUG_MODE:
            model_hash = _tree_hash((self.graphstate, self.graphother, inputs))
            model_hash_baseline = self._debug_baselines[f"{num_tokens}_{padded_num_reqs}_hash_in_model"]
            _tree_hash_diff(model_hash_baseline, model_hash)

        start_exec = time.time()
        model_outputs = jax.block_until_ready(model_fn(self.graphstate, self.graphother, inputs))
        exec_took = time.time() - start_exec

        self.kv_pages = model_outputs.kv_pages

        sampler_inputs = (
            batch_metadata,
            device_state,
            req_num_tokens_full,
            active_mask_full,
            model_outputs.logits,
            self.rng_key,
        )

        if DEBUG_MODE:
            sampler_hash = _tree_hash(sampler_inputs)
            sampler_hash_baseline = self._debug_baselines[f"{num_tokens}_{padded_num_reqs}_hash_in_sampler"]
            _tree_hash_diff(sampler_hash_baseline, sampler_hash)

        start_sample = time.time()
        device_state, self.rng_key, out_tokens_full, valid_mask_full = jax.block_until_ready(sampler_fn(*sampler_inputs))
        sample_took = time.time() - start_sample
        buckets_processed = batch_metadata.input_ids_buf.shape[-1]
        metrics = {
            "exec_time": exec_took,
            "sample_time": sample_took,
            "prep_time": prep_took,
            "buckets_processed": buckets_processed,
        }

        query_start_loc_buf = batch_metadata.query_start_loc
        seq_lens_buf = batch_metadata.seq_lens
        pages_tables_buf = batch_metadata.pages_tables
        hidden_states = model_outputs.hidden_states
        logits = model_outputs.logits

        return (
            device_state,
            out_tokens_full,
            valid_mask_full,
            input_ids_buf,
            position_ids_buf,
            query_start_loc_buf,
            seq_lens_buf,
            pages_tables_buf,
            hidden_states,
            logits,
            metrics,
        )

    def get_compiled_key(self, num_tokens: int, padded_num_reqs: int):
        """Retrieve pre-compiled model step function for given input dimensions.

        Args:
            num_tokens: Number of tokens in the input batch.
            padded_num_reqs: Padded number of requests for batching.

        Returns:
            Compiled fused step function for the specified number of tokens.
        """

        mode = "aot" if self.use_aot_forward else "jit"
        model_key = (num_tokens, padded_num_reqs, "model", mode)
        sampler_key = (num_tokens, padded_num_reqs, "sampler", mode)
        if model_key in self._model_lowerd_history:
            logger.debug(f"[CACHE HIT] model_key={model_key}")
        else:
            logger.warning(f"[CACHE MISS] key={model_key}! Will trigger recompilation (model)")
            logger.warning(f"Available keys in cache: {list(self._model_lowerd_history.keys())}")
        if sampler_key in self._sampler_lowerd_history:
            logger.debug(f"[CACHE HIT] sampler_key={sampler_key}")
        else:
            logger.warning(f"[CACHE MISS] key={sampler_key}! Will trigger recompilation (sampler)")
            logger.warning(f"Available keys in cache: {list(self._sampler_lowerd_history.keys())}")
        return self._model_cache_get(model_key), self._sampler_cache_get(sampler_key)
