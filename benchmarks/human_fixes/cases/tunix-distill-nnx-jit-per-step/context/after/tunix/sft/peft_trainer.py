# Trimmed from google/tunix@0454a18127d5:tunix/sft/peft_trainer.py (Apache-2.0).
from collections.abc import Iterable
import contextlib
import dataclasses
import time
from typing import Any, Callable, Concatenate, Dict, ParamSpec, Tuple
from absl import logging
import flax
from flax import nnx
import jax
from jax.interpreters import pxla
import jax.numpy as jnp
import jax.sharding as shd
from jax.typing import ArrayLike  # pylint: disable=g-importing-member
import numpy as np
import optax
import orbax.checkpoint as ocp
from tunix.sft import checkpoint_manager
from tunix.sft import inflight_throttler
from tunix.sft import metrics_logger
from tunix.sft import profiler
from tunix.sft import progress_bar

@flax.struct.dataclass(frozen=True)
class TrainingInput:
  # Input tokens provided to the model.
  input_tokens: jax.Array | np.ndarray

  # A mask that determines which input tokens are valid.
  input_mask: jax.Array | np.ndarray

class PeftTrainer:
  """PEFT trainer for LoRA. Only LoRA parameters are updated."""

  def _prepare_inputs(self, input_data: Any) -> Any:
    """Override this function for additional input preparation."""
    return input_data

  def train(
      self,
      train_ds: Iterable[Any],
      eval_ds: Iterable[Any] | None = None,
      skip_jit: bool = False,
  ) -> None:
    """Training loop."""
    mesh = pxla.thread_resources.env.physical_mesh
    logging.info("Training with mesh: %s", mesh)

    train_step, eval_step = self.jit_train_and_eval_step(skip_jit)

    if self.config.max_steps is not None:
      self._pbar = progress_bar.ProgressBar(
          metrics_logger=self.metrics_logger,
          initial_steps=self._train_steps,
          max_steps=self.config.max_steps,
      )
    with time_measure("Train loop"):
      for index, train_example in enumerate(train_ds):
        # TODO(annyan): This is a temporary solution to support the external
        # checkpoint manager. Because with external checkpoint manager, the
        # training steps are not reset to 0, so need to skip the check blow. We
        # need to think through how checkpointing should work with external
        # checkpoint manager.
        if not self.use_external_ckpt_manager:
          # TODO(mridulsahu): Add support to restore the iterator state
          # instead of skipping the already trained examples.
          if index < self._train_steps:
            # Skip the examples that are already trained.
            continue
        self._prof.maybe_activate(self._train_steps)
        with jax.profiler.StepTraceAnnotation(
            "train", step_num=self._train_steps
        ):
          if (
              eval_ds
              and self._train_steps % self.config.eval_every_n_steps == 0
          ):
            self._run_eval(eval_ds, eval_step)

          # Stop training if max_steps is reached.
          if (
              self.config.max_steps is not None
              and self._train_steps >= self.config.max_steps
          ):
            break

          train_example = self._prepare_inputs(train_example)
          train_example = self._shard_input(train_example)

          self._throttler.wait_for_next()
          train_loss, aux = train_step(
              self.model, self.optimizer, train_example
          )
          self._throttler.add_computation(train_loss)
          self._train_steps += 1
          self._post_process_train_step(aux)
          self._log_metrics(train_loss, self._train_steps)
          self._may_update_pbar(self._tqdm_train_metrics, increment_steps=True)

          logging.info(
              "Train step %d training loss: %f  - training perplexity: %f",
              self._train_steps,
              self.metrics_logger.get_metric("loss", "train"),
              self.metrics_logger.get_metric("perplexity", "train"),
          )

          # Actual checkpoint frequency is configured by checkpointing_options.
          self.checkpoint_manager.save(
              self._train_steps,
              self.model,
              save_only_lora_params=self._lora_enabled,
          )
          self._prof.maybe_deactivate(self._train_steps)

    self._throttler.wait_for_all()
    # Save the final checkpoint forcefully if not already saved.
    last_saved_step = self.checkpoint_manager.latest_step()
    if last_saved_step is None or last_saved_step < self._train_steps:
      self.checkpoint_manager.save(
          self._train_steps,
          self.model,
          save_only_lora_params=self._lora_enabled,
          force=True,
      )
    if not self.use_external_ckpt_manager:
      self.checkpoint_manager.close()
    self.close()
