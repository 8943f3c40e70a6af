# Trimmed from AI-Hypercomputer/maxdiffusion@b161ce36dfb6:src/maxdiffusion/trainers/sdxl_trainer.py (Apache-2.0); see case.toml.
import os
from functools import partial
import datetime
import time
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P
from flax.linen import partitioning as nn_partitioning
from maxdiffusion.trainers.stable_diffusion_trainer import (StableDiffusionTrainer)

from maxdiffusion.input_pipeline.input_pipeline_interface import (make_data_iterator)

from maxdiffusion import (max_utils, maxdiffusion_utils, max_logging)

from maxdiffusion.train_utils import (
    compute_snr,
    generate_timestep_weights,
    get_first_step,
    load_next_batch,
    record_scalar_metrics,
    write_metrics,
)

from maxdiffusion.checkpointing.base_stable_diffusion_checkpointer import (STABLE_DIFFUSION_XL_CHECKPOINT)

class StableDiffusionXLTrainer(StableDiffusionTrainer):


  def training_loop(self, p_train_step, pipeline, params, train_states, data_iterator, unet_learning_rate_scheduler):

    writer = max_utils.initialize_summary_writer(self.config)
    unet_state = train_states["unet_state"]
    vae_state = train_states["vae_state"]
    text_encoder_state = train_states["text_encoder_state"]
    text_encoder_2_state = train_states["text_encoder_2_state"]
    num_model_parameters = max_utils.calculate_num_params_from_pytree(unet_state.params)

    max_utils.add_text_to_summary_writer("number_model_parameters", str(num_model_parameters), writer)
    max_utils.add_text_to_summary_writer("libtpu_init_args", os.environ.get("LIBTPU_INIT_ARGS", ""), writer)
    max_utils.add_config_to_summary_writer(self.config, writer)

    if jax.process_index() == 0:
      max_logging.log("***** Running training *****")
      max_logging.log(f"  Instantaneous batch size per device = {self.config.per_device_batch_size}")
      max_logging.log(f"  Total train batch size (w. parallel & distributed) = {self.total_train_batch_size}")
      max_logging.log(f"  Total optimization steps = {self.config.max_train_steps}")

    last_step_completion = datetime.datetime.now()
    local_metrics_file = open(self.config.metrics_file, "a", encoding="utf8") if self.config.metrics_file else None
    running_gcs_metrics = [] if self.config.gcs_metrics else None
    example_batch = None

    first_profiling_step = self.config.skip_first_n_steps_for_profiler
    if self.config.enable_profiler and first_profiling_step >= self.config.max_train_steps:
      raise ValueError("Profiling requested but initial profiling step set past training final step")
    last_profiling_step = np.clip(
        first_profiling_step + self.config.profiler_steps - 1, first_profiling_step, self.config.max_train_steps - 1
    )
    start_step = get_first_step(train_states["unet_state"])
    _, train_rngs = jax.random.split(self.rng)

    for step in np.arange(start_step, self.config.max_train_steps):
      if self.config.enable_profiler and step == first_profiling_step:
        max_utils.activate_profiler(self.config)

      example_batch = load_next_batch(data_iterator, example_batch, self.config)

      with jax.profiler.StepTraceAnnotation("train", step_num=step):
        (unet_state, train_metric, train_rngs) = p_train_step(
            unet_state, vae_state, text_encoder_state, text_encoder_2_state, example_batch, train_rngs
        )

      samples_count = self.total_train_batch_size * (step + 1)
      new_time = datetime.datetime.now()

      record_scalar_metrics(
          train_metric, new_time - last_step_completion, self.per_device_tflops, unet_learning_rate_scheduler(step)
      )
      if self.config.write_metrics:
        write_metrics(writer, local_metrics_file, running_gcs_metrics, train_metric, step, self.config)
      last_step_completion = new_time

      if step != 0 and self.config.checkpoint_every != -1 and samples_count % self.config.checkpoint_every == 0:
        train_states["unet_state"] = unet_state
        train_states["vae_state"] = vae_state
        train_states["text_encoder_state"] = text_encoder_state
        train_states["text_encoder_2_state"] = text_encoder_2_state
        self.save_checkpoint(step, pipeline, params, train_states)

      if self.config.enable_profiler and step == last_profiling_step:
        max_utils.deactivate_profiler(self.config)

    if self.config.write_metrics:
      write_metrics(
          writer, local_metrics_file, running_gcs_metrics, train_metric, self.config.max_train_steps - 1, self.config
      )

    train_states["unet_state"] = unet_state
    train_states["text_encoder_state"] = text_encoder_state
    train_states["text_encoder_2_state"] = text_encoder_2_state
    self.save_checkpoint(self.config.max_train_steps - 1, pipeline, params, train_states)
    self.checkpoint_manager.wait_until_finished()
