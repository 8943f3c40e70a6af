# Trimmed from AI-Hypercomputer/maxdiffusion@e2cb67f223cb:src/maxdiffusion/trainers/wan_trainer.py (Apache-2.0); see case.toml.
import os
import datetime
import functools
import numpy as np
import jax.numpy as jnp
import jax
import jax.tree_util as jtu
from flax import nnx
from flax.linen import partitioning as nn_partitioning
from ..schedulers import FlaxEulerDiscreteScheduler
from .. import max_utils, max_logging, train_utils, maxdiffusion_utils
from ..checkpointing.wan_checkpointer import (WanCheckpointer, WAN_CHECKPOINT)
from maxdiffusion.multihost_dataloading import _form_global_array

class WanTrainer(WanCheckpointer):


  def training_loop(self, pipeline, optimizer, learning_rate_scheduler, data):

    graphdef, state = nnx.split((pipeline.transformer, optimizer))
    writer = max_utils.initialize_summary_writer(self.config)
    num_model_parameters = max_utils.calculate_num_params_from_pytree(state[0])
    max_utils.add_text_to_summary_writer("number_model_parameters", str(num_model_parameters), writer)
    max_utils.add_text_to_summary_writer("libtpu_init_args", os.environ.get("LIBTPU_INIT_ARGS", ""), writer)
    max_utils.add_config_to_summary_writer(self.config, writer)

    if jax.process_index() == 0:
      max_logging.log("***** Running training *****")
      max_logging.log(f"  Instantaneous batch size per device = {self.config.per_device_batch_size}")
      max_logging.log(f"  Total train batch size (w. parallel & distributed) = {self.global_batch_size}")
      max_logging.log(f"  Total optimization steps = {self.config.max_train_steps}")

    state = state.to_pure_dict()
    p_train_step = jax.jit(
        train_step,
        donate_argnums=(0,),
    )
    rng = jax.random.key(self.config.seed)
    start_step = 0
    last_step_completion = datetime.datetime.now()
    local_metrics_file = open(self.config.metrics_file, "a", encoding="utf8") if self.config.metrics_file else None
    running_gcs_metrics = [] if self.config.gcs_metrics else None
    first_profiling_step = self.config.skip_first_n_steps_for_profiler
    if self.config.enable_profiler and first_profiling_step >= self.config.max_train_steps:
      raise ValueError("Profiling requested but initial profiling step set past training final step")
    last_profiling_step = np.clip(
        first_profiling_step + self.config.profiler_steps - 1, first_profiling_step, self.config.max_train_steps - 1
    )
    # TODO - 0 needs to be changed to last step if continuing from an orbax checkpoint.
    start_step = 0
    per_device_tflops = self.calculate_tflops(pipeline)

    for step in np.arange(start_step, self.config.max_train_steps):
      if self.config.enable_profiler and step == first_profiling_step:
        max_utils.activate_profiler(self.config)
      with jax.profiler.StepTraceAnnotation("train", step_num=step), pipeline.mesh, nn_partitioning.axis_rules(
          self.config.logical_axis_rules
      ):
        state, train_metric, rng = p_train_step(state, graphdef, data, rng)

      new_time = datetime.datetime.now()

      if self.config.enable_profiler and step == last_profiling_step:
        max_utils.deactivate_profiler(self.config)

      train_utils.record_scalar_metrics(
          train_metric, new_time - last_step_completion, per_device_tflops, learning_rate_scheduler(step)
      )
      if self.config.write_metrics:
        train_utils.write_metrics(writer, local_metrics_file, running_gcs_metrics, train_metric, step, self.config)
      last_step_completion = new_time
