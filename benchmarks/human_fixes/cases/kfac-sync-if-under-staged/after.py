# Trimmed from google-deepmind/kfac-jax@c275017f3457:kfac_jax/_src/optimizer.py (Apache-2.0); see case.toml.
import functools
from typing import Callable, Iterator, Optional, Sequence, Any, Generic, Tuple, Union, Dict

import jax
from jax import lax
import jax.numpy as jnp
from kfac_jax._src import curvature_estimator
from kfac_jax._src import utils
from typing_extensions import TypeAlias

class Optimizer(utils.WithStagedMethods):
  """The K-FAC optimizer."""

  def _update_estimator_curvature(
      self,
      estimator_state: curvature_estimator.BlockDiagonalCurvature.State,
      func_args: FuncArgsVariants,
      rng: PRNGKey,
      ema_old: Numeric,
      ema_new: Numeric,
      sync: Union[Array, bool] = True
  ) -> curvature_estimator.BlockDiagonalCurvature.State:
    """Updates the curvature estimator state."""
    # TODO(kazukiosawa, jamesmartens, botev): Prepare an entirely separate
    # method to perform syncs (independent of any updating) to support more
    # advanced use cases.
    state = self.estimator.update_curvature_matrix_estimate(
        state=estimator_state,
        ema_old=ema_old,
        ema_new=ema_new,
        # Note that the batch is always the last entry of FuncArgsVariantsdef
        batch_size=self._batch_size_extractor(func_args[-1]),
        rng=rng,
        func_args=func_args,
    )
    return jax.lax.cond(
        sync,
        functools.partial(self.estimator.sync,
                          pmap_axis_name=self.pmap_axis_name),
        lambda state_: state_,
        state,
    )

  def _maybe_update_estimator_curvature(
      self,
      state: "Optimizer.State",
      func_args: FuncArgsVariants,
      rng: PRNGKey,
      ema_old: Numeric,
      ema_new: Numeric,
      sync: Union[Array, bool] = True,
  ) -> "Optimizer.State":
    """Updates the curvature estimates if it is the right iteration."""
    return self._maybe_update_estimator_state(
        state,
        self.should_update_estimate_curvature(state),
        self._update_estimator_curvature,
        func_args=func_args,
        rng=rng,
        ema_old=ema_old,
        ema_new=ema_new,
        sync=sync,
    )

  @functools.partial(utils.staged, donate_argnums=(0, 1, 4))
  @utils.auto_scope_method
  def _step(
      self,
      params: Params,
      state: "Optimizer.State",
      rng: Array,
      batch: Batch,
      func_state: Optional[FuncState],
      learning_rate: Optional[Array],
      momentum: Optional[Array],
      damping: Optional[Array]
  )-> ReturnEither:
    """A single full step of the optimizer."""

    # Copy this first since we mutate it later in this function.
    state = state.copy()

    # Setup arguments
    learning_rate, momentum, damping = self._setup_state_and_schedules(
        learning_rate, momentum,
        state.damping if self._use_adaptive_damping else damping,
        state.step_counter, state.data_seen)

    func_args, rng = self._setup_func_args_and_rng(
        params, rng, batch, func_state)

    # Update curvature estimate
    state = self._maybe_update_estimator_curvature(
        state,
        func_args,
        rng,
        self._curvature_ema,
        1.0,
        sync=self.should_update_inverse_cache(
            state
        ),  # sync curvature estimates only before inverses are updated.
    )

    del rng  # should not be used after this point!

    # Compute loss and gradients
    loss, grads, func_state, aux = self._compute_loss_and_grads(func_args)

    # Sync
    loss, grads = utils.pmean_if_pmap((loss, grads), self.pmap_axis_name)

    # Update the inverse curvature
    state = self._maybe_update_inverse_cache(state, damping)

    # Compute proposed directions
    preconditioned_gradient, sq_norm_scaled_grads = (
        self._compute_preconditioned_gradient(state, grads, learning_rate,
                                              damping)
    )
    vectors = (preconditioned_gradient, state.velocities)

    # Compute the coefficients for the vectors
    coefficients, quad_model_change = self._coefficients_and_quad_change(
        state=state,
        vectors=vectors,
        grads=grads,
        learning_rate=learning_rate,
        momentum=momentum,
        damping=damping,
        func_args=func_args)

    # Compute delta and update velocities
    delta = self.weighted_sum_of_objects(vectors, coefficients)
    state.velocities = delta

    # Update parameters
    params = jax.tree_util.tree_map(jnp.add, params, delta)

    # Optionally compute the reduction ratio and update the damping
    if self._use_adaptive_damping:

      state.damping, rho, new_loss = lax.cond(
          self.should_update_damping(state),
          lambda args: self._update_damping(*args),
          lambda args: (args[0], jnp.nan, jnp.nan),
          operand=(state.damping, loss, quad_model_change,
                   (params,) + func_args[1:])
      )
    else:
      new_loss, rho = jnp.nan, jnp.nan

    # Compute per-device and total batch size
    batch_size = self._batch_size_extractor(func_args[-1])

    if self.multi_device:
      total_batch_size = batch_size * jax.device_count()
    else:
      total_batch_size = batch_size

    # Update data seen and step counter
    state.data_seen = state.data_seen + total_batch_size
    state.step_counter = state.step_counter + 1

    # Statistics with useful information
    # Unlike other norm stats, sq_norm_scaled_grads has to be computed if
    # norm_constraint is not None, so log it by default even if the other
    # norm stats are not logged. This reduces the overall computational cost if
    # no other grad stats are desired.
    stats = dict(
        step=state.step_counter,
        batch_size=jnp.asarray(total_batch_size, dtype=jnp.int32),
        data_seen=state.data_seen,
        loss=loss,
        new_loss=new_loss,
        learning_rate=-coefficients[0],
        momentum=coefficients[1],
        damping=damping,
        rho=rho,
        quad_model_change=quad_model_change,
        scaled_grad_norm_sq=sq_norm_scaled_grads,
    )

    if self._value_func_has_aux:
      stats["aux"] = utils.pmean_if_pmap(aux, self.pmap_axis_name)

    if self._include_norms_in_stats:
      stats["param_norm"] = utils.norm(params)
      stats["grad_norm"] = utils.norm(grads)
      stats["precon_grad_norm"] = utils.norm(preconditioned_gradient)
      stats["update_norm"] = utils.norm(delta)

    if self._include_per_param_norms_in_stats:
      stats.update(utils.per_parameter_norm(params, "param_norm"))
      stats.update(utils.per_parameter_norm(grads, "grad_norm"))
      stats.update(
          utils.per_parameter_norm(preconditioned_gradient, "precon_grad_norm")
      )
      stats.update(utils.per_parameter_norm(delta, "update_norm"))

    if self._value_func_has_state:
      return params, state, func_state, stats
    else:
      assert func_state is None
      return params, state, stats
