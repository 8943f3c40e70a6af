# Trimmed from erfanzar/EasyDeL@35f5df6540b0:easydel/inference/esurge/runners/model_runner.py (Apache-2.0); see case.toml.
from __future__ import annotations

import time
import typing
from bisect import bisect_left
from dataclasses import replace

import jax
import numpy as np
from eformer.loggings import get_logger
from jax import numpy as jnp

from ..metrics import get_metrics_collector
from ..outputs import ModelRunnerOutput
from ..page_table import PAGE_TABLE_PADDING_VAL, SLOT_MAPPING_PADDING_VAL
from ..scheduler import SchedulerOutput
from .execution_manager import ExecutionManager
from .sequence_buffer import SequenceBuffer
from .states import CachedRequestState

class eSurgeRunner:
    """High-performance model runner for efficient batched inference.

    The eSurgeRunner orchestrates model execution with advanced features:
    - Paged attention for memory-efficient KV cache management
    - Dynamic batching with request scheduling
    - Pre-allocated buffers for zero-copy operations
    - Vectorized token processing
    - Compilation caching for different batch/sequence configurations

    The runner maintains an internal state of active requests and manages
    their lifecycle from prompt processing through token generation.

    Architecture:
        Request Flow:
        1. Scheduler provides requests to execute
        2. Runner updates internal state (add/remove requests)
        3. Prepares inputs with proper padding and batching
        4. Executes model using pre-compiled functions
        5. Processes sampled tokens and updates buffers
        6. Returns results to scheduler

    Memory Management:
        - Pre-allocated buffers for common operations
        - Paged KV cache with configurable page size
        - Efficient slot mapping for attention
        - Buffer reuse across batches

    Attributes:
        model: The EasyDeL model to run
        metadata: Paged attention metadata
        max_num_seqs: Maximum concurrent sequences
        max_model_len: Maximum sequence length
        executor_manager: Manages compiled functions
        sequence_buffer: Manages active sequences
        requests: Active request states

    Example:
        >>> runner = eSurgeRunner(
        ...     model=model,
        ...     max_model_len=2048,
        ...     max_num_seqs=8,
        ...     hbm_utilization=0.9,
        ...     page_size=128
        ... )
        >>>
        >>> # Compile for all configurations
        >>> runner.compile()
        >>>
        >>> # Execute requests from scheduler
        >>> output = runner.execute_model(scheduler_output)
        >>>
        >>> # Process results
        >>> for req_id, tokens in zip(output.req_ids, output.sampled_token_ids):
        ...     print(f"Request {req_id}: {tokens}")
    """

    def execute_model(self, scheduler_output: SchedulerOutput) -> ModelRunnerOutput:
        """Execute the model on scheduled requests.

        Main entry point for model execution. Processes all scheduled requests
        in batches, handling state updates, input preparation, model execution,
        and token processing.

        The method handles:
        1. State synchronization with scheduler
        2. Batch-wise processing of requests
        3. Token generation and sampling
        4. Buffer updates and metrics logging

        Args:
            scheduler_output: Output from the scheduler containing:
                - Requests to process
                - Tokens to generate per request
                - Finished/new/cached request information

        Returns:
            ModelRunnerOutput: Contains:
                - req_ids: List of processed request IDs
                - sampled_token_ids: Generated tokens per request
                - logprobs: Log probabilities (if requested)
                - Timing and debugging information

        Note:
            The method processes requests in batches when they exceed
            the maximum model length, ensuring all requests are handled
            efficiently without exceeding memory constraints.
        """
        execution_start_time = time.time()

        updating_states_start = time.time()
        self._update_states(scheduler_output)
        updating_states_time = time.time() - updating_states_start

        if not scheduler_output.total_num_scheduled_tokens:
            return ModelRunnerOutput(
                req_ids=[],
                req_id_to_index={},
                sampled_token_ids=[],
                spec_token_ids=None,
                logprobs=None,
                prompt_logprobs_dict={},
                finished_sending=None,
                finished_recving=None,
                num_nans_in_logits=None,
            )

        start_index = 0
        total_exec_time = 0.0
        total_prep_time = 0.0
        total_sync_time = 0.0
        total_post_proc_time = 0.0

        # Result lists
        req_ids_all: list[str] = []
        sampled_token_ids_all: list[list[int]] = []

        # Initial device state conversion
        t_dev_state_start = time.time()
        dev_state = self.sequence_buffer.to_device_state()
        t_dev_state = time.time() - t_dev_state_start

        while start_index < self.sequence_buffer.num_reqs:
            # Window preparation timing
            t_prep_start = time.time()

            num_reqs_total = self.sequence_buffer.num_reqs
            scheduled_list: list[int] = []
            req_ids_window = []
            for i in range(start_index, min(num_reqs_total, start_index + self.num_reqs_max_model_len)):
                rid = self.sequence_buffer.req_ids[i]
                req_ids_window.append(rid)
                scheduled_list.append(int(scheduler_output.num_scheduled_tokens.get(rid, 0)) if rid is not None else 0)

            while scheduled_list and scheduled_list[-1] == 0:
                scheduled_list.pop()
                req_ids_window.pop()

            num_reqs = len(scheduled_list)
            if num_reqs == 0:
                break
            end_index = start_index + num_reqs

            # Host compute: num_tokens_static = smallest bucket >= total
            total_scheduled = sum(scheduled_list)
            idx = bisect_left(self.num_tokens_paddings, total_scheduled)
            if idx >= len(self.num_tokens_paddings):
                idx = len(self.num_tokens_paddings) - 1
            num_tokens_static = int(self.num_tokens_paddings[idx])

            # Array preparation using pre-allocated buffers
            # Only update the parts we need - no full reset needed since ExecutionManager only reads [:num_reqs]
            if num_reqs > 0:
                # Build arrays directly in numpy (faster for small arrays)
                scheduled_np = np.array(scheduled_list, dtype=np.int32)
                req_num_tokens_np = np.zeros(self.max_num_reqs, dtype=np.int32)
                active_mask_np = np.zeros(self.max_num_reqs, dtype=bool)

                for i, rid in enumerate(req_ids_window):
                    if rid is not None:
                        rs = self.requests.get(rid)
                        if rs:
                            req_num_tokens_np[i] = rs.num_tokens
                        active_mask_np[i] = True

                # Single conversion to JAX arrays
                self.scheduled_full_buf = jnp.asarray(scheduled_np, dtype=jnp.int32)
                if len(scheduled_np) < self.max_num_reqs:
                    # Pad with zeros
                    self.scheduled_full_buf = jnp.pad(
                        self.scheduled_full_buf,
                        (0, self.max_num_reqs - len(scheduled_np)),
                        constant_values=0,
                    )
                self.req_num_tokens_full_buf = jnp.asarray(req_num_tokens_np, dtype=jnp.int32)
                self.active_mask_full_buf = jnp.asarray(active_mask_np, dtype=bool)

            # Calculate padded_num_reqs
            nr_safe = max(num_reqs, 1)
            next_pow2 = 1 << (nr_safe - 1).bit_length()
            padded_num_reqs = min(self.min_input_pad if num_reqs <= self.min_input_pad else next_pow2, self.max_num_reqs)

            t_prep = time.time() - t_prep_start
            total_prep_time += t_prep

            # Execute model
            exec_start = time.time()
            (
                dev_state,
                out_tokens_win,
                valid_mask_win,
                self.input_ids_buf,
                self.position_ids_buf,
                self.query_start_loc_buf,
                self.seq_lens_buf,
                self.pages_tables_buf,
                self.slot_mapping_buf,
            ) = self.executor_manager.execute_fused(
                num_tokens=num_tokens_static,
                dev_state=dev_state,
                scheduled_full=self.scheduled_full_buf,
                req_num_tokens_full=self.req_num_tokens_full_buf,
                active_mask_full=self.active_mask_full_buf,
                input_ids_buf=self.input_ids_buf,
                position_ids_buf=self.position_ids_buf,
                slot_mapping_buf=self.slot_mapping_buf,
                padded_num_reqs=padded_num_reqs,
            )
            t_exec = time.time() - exec_start
            total_exec_time += t_exec

            # Async copy
            out_tokens_win.copy_to_host_async()
            valid_mask_win.copy_to_host_async()

            # Sequence buffer update timing
            sq_utime = time.time()
            self.sequence_buffer = self.sequence_buffer.from_device_state(dev_state)
            sq_utime_took = time.time() - sq_utime
            total_sync_time += sq_utime_took

            # Post-processing - highly optimized
            up_wtime = time.time()

            # Direct boolean array indexing (fastest)
            for i, rid in enumerate(req_ids_window):
                if rid is None:
                    continue
                req_ids_all.append(rid)

                if valid_mask_win[i]:
                    # Direct extraction without conversion overhead
                    tid = int(out_tokens_win[i])
                    sampled_token_ids_all.append([tid])
                    # Only lookup if we need to update
                    if rid in self.requests:
                        self.requests[rid].output_token_ids.append(tid)
                else:
                    sampled_token_ids_all.append([])

            up_wtime_took = time.time() - up_wtime
            total_post_proc_time += up_wtime_took

            start_index = end_index

        # kv_pages and rng_key are already updated inside executor_manager

        metrics_collector = get_metrics_collector()
        if metrics_collector:
            metrics_collector.record_runner_metrics(
                execution_time=time.time() - execution_start_time,
                batch_size=len(req_ids_all),
                num_tokens=scheduler_output.total_num_scheduled_tokens,
            )

        total_time = time.time() - execution_start_time
        self.log_it(
            f"[fused] exec={total_exec_time:.3f}s "
            f"prep={total_prep_time:.3f}s "
            f"sync={total_sync_time:.3f}s "
            f"post={total_post_proc_time:.3f}s "
            f"init_dev={t_dev_state:.3f}s "
            f"upd_states={updating_states_time:.3f}s "
            f"total={total_time:.3f}s"
        )

        return ModelRunnerOutput(
            req_ids=req_ids_all,
            req_id_to_index=self.sequence_buffer.req_id_to_index,
            sampled_token_ids=sampled_token_ids_all,
            spec_token_ids=None,
            logprobs=None,
            prompt_logprobs_dict={rid: None for rid in req_ids_all},
            finished_sending=None,
            finished_recving=None,
        )
