# Trimmed from AI-Hypercomputer/maxdiffusion@0af353d6b2ef:src/maxdiffusion/schedulers/scheduling_unipc_multistep_flax.py (Apache-2.0); see case.toml.
from typing import List, Optional, Tuple, Union
from dataclasses import dataclass

import flax
import jax
import jax.numpy as jnp

from ..configuration_utils import ConfigMixin, register_to_config
from ..utils import is_scipy_available
from .scheduling_utils_flax import (
    CommonSchedulerState,
    FlaxSchedulerMixin,
    FlaxSchedulerOutput,
    add_noise_common,
)

@flax.struct.dataclass
class UniPCMultistepSchedulerState:
  """
  Data class to hold the mutable state of the FlaxUniPCMultistepScheduler.
  """

  common: CommonSchedulerState

  # Core schedule parameters (derived from CommonSchedulerState in create_state)
  sigmas: jnp.ndarray
  alpha_t: jnp.ndarray
  sigma_t: jnp.ndarray
  lambda_t: jnp.ndarray
  init_noise_sigma: float

  # History buffers for multi-step solver
  # `model_outputs` stores previous converted model outputs (e.g., predicted x0 or epsilon)
  timesteps: jnp.ndarray = None
  model_outputs: jnp.ndarray = None
  timestep_list: jnp.ndarray = None  # Stores corresponding timesteps for `model_outputs`

  # State variables for tracking progress and solver order
  lower_order_nums: int = 0
  last_sample: Optional[jnp.ndarray] = None  # Sample from the previous predictor step
  step_index: Optional[int] = None
  begin_index: Optional[int] = None  # Used for img2img/inpaing
  this_order: int = 0  # Current effective order of the UniPC solver for this step

  @classmethod
  def create(
      cls,
      common_state: CommonSchedulerState,
      alpha_t: jnp.ndarray,
      sigma_t: jnp.ndarray,
      lambda_t: jnp.ndarray,
      sigmas: jnp.ndarray,
      init_noise_sigma: jnp.ndarray,
  ):
    return cls(
        common=common_state,
        alpha_t=alpha_t,
        sigma_t=sigma_t,
        lambda_t=lambda_t,
        sigmas=sigmas,
        init_noise_sigma=init_noise_sigma,
        lower_order_nums=0,
        last_sample=None,
        step_index=None,
        begin_index=None,
        this_order=0,
    )

class FlaxUniPCMultistepScheduler(FlaxSchedulerMixin, ConfigMixin):
  """
  `FlaxUniPCMultistepScheduler` is a JAX/Flax training-free framework designed for the fast sampling of diffusion models.
  It implements the UniPC (Unified Predictor-Corrector) algorithm for efficient diffusion model sampling.
  """

  def multistep_uni_p_bh_update(
      self,
      state: UniPCMultistepSchedulerState,
      model_output: jnp.ndarray,  # Original model output from the diffusion model
      sample: jnp.ndarray,
      order: int,
  ) -> jnp.ndarray:
    """
    One step for the UniP (B(h) version) - the Predictor.
    """
    if self.config.solver_p:
      raise NotImplementedError("Nested `solver_p` is not implemented in JAX version yet.")

    m0 = state.model_outputs[self.config.solver_order - 1]  # Most recent stored converted model output
    x = sample

    sigma_t_val, sigma_s0_val = (
        state.sigmas[state.step_index + 1],
        state.sigmas[state.step_index],
    )

    alpha_t, sigma_t = self._sigma_to_alpha_sigma_t(sigma_t_val)
    alpha_s0, sigma_s0 = self._sigma_to_alpha_sigma_t(sigma_s0_val)

    lambda_t = jnp.log(alpha_t + 1e-10) - jnp.log(sigma_t + 1e-10)
    lambda_s0 = jnp.log(alpha_s0 + 1e-10) - jnp.log(sigma_s0 + 1e-10)

    h = lambda_t - lambda_s0

    rks_list = []
    D1s_list = []

    for i in range(1, order):
      history_idx = self.config.solver_order - 1 - i  # Correct index for history array

      mi = state.model_outputs[history_idx]
      si_val = state.timestep_list[history_idx]  # This is the actual timestep value

      alpha_si, sigma_si = self._sigma_to_alpha_sigma_t(state.sigmas[self.index_for_timestep(state, si_val)])
      lambda_si = jnp.log(alpha_si + 1e-10) - jnp.log(sigma_si + 1e-10)

      rk = (lambda_si - lambda_s0) / h
      rks_list.append(rk)
      D1s_list.append((mi - m0) / rk)

    rks_list.append(1.0)  # Append the last 1.0 for r_order
    rks = jnp.stack(rks_list)  # Shape (order,)

    R_list = []
    b_list = []

    hh = -h if self.config.predict_x0 else h
    h_phi_1 = jnp.expm1(hh)

    current_h_phi_k = h_phi_1 / hh - 1.0
    factorial_val = 1.0  # factorial(1) is 1. For `factorial_i *= i + 1`

    if self.config.solver_type == "bh1":
      B_h = hh
    elif self.config.solver_type == "bh2":
      B_h = jnp.expm1(hh)
    else:
      raise NotImplementedError()

    for i in range(1, order + 1):  # Loop from i=1 to order
      R_list.append(jnp.power(rks, i - 1))
      b_list.append(current_h_phi_k * factorial_val / B_h)

      if i < order:  # Update for next iteration (i+1)
        factorial_val *= i + 1
        current_h_phi_k = current_h_phi_k / hh - 1.0 / factorial_val  # Update for next i

    R = jnp.stack(R_list)  # Shape (order, order)
    b = jnp.stack(b_list)  # Shape (order,)

    D1s = None
    if len(D1s_list) > 0:
      D1s = jnp.stack(D1s_list, axis=1)  # Resulting shape (B, K, C, H, W)

    if order == 2:  # Special case for order 2 from original
      rhos_p = jnp.array([0.5], dtype=x.dtype)
    else:  # General case, solve linear system

      rhos_p = jnp.linalg.solve(R[:-1, :-1], b[:-1]).astype(x.dtype)

    if self.config.predict_x0:
      x_t_ = sigma_t / sigma_s0 * x - alpha_t * h_phi_1 * m0
      if D1s is not None:
        # einsum `k,bkc...->bc...` where k is rhos_p dim, b is batch, c is channel, ...
        pred_res = jnp.einsum("k,bkc...->bc...", rhos_p, D1s)
      else:
        pred_res = 0.0
      x_t = x_t_ - alpha_t * B_h * pred_res
    else:  # Predict epsilon
      x_t_ = alpha_t / alpha_s0 * x - sigma_t * h_phi_1 * m0
      if D1s is not None:
        pred_res = jnp.einsum("k,bkc...->bc...", rhos_p, D1s)
      else:
        pred_res = 0.0
      x_t = x_t_ - sigma_t * B_h * pred_res

    return x_t.astype(x.dtype)

  def step(
      self,
      state: UniPCMultistepSchedulerState,
      model_output: jnp.ndarray,  # This is the direct output from the diffusion model (e.g., noise prediction)
      timestep: Union[int, jnp.ndarray],  # Current discrete timestep from the scheduler's sequence
      sample: jnp.ndarray,  # Current noisy sample (latent)
      return_dict: bool = True,
      generator: Optional[jax.random.PRNGKey] = None,  # JAX random key
  ) -> Union[FlaxUniPCMultistepSchedulerOutput, Tuple[jnp.ndarray]]:
    """
    Predict the sample from the previous timestep by reversing the SDE. This function propagates the sample with
    the multistep UniPC.
    """
    if state.timesteps is None:
      raise ValueError("Number of inference steps is 'None', you need to run 'set_timesteps' after creating the scheduler")
    # Ensure timestep is a scalar for indexing/comparison
    timestep_scalar = (
        timestep.item() if isinstance(timestep, jnp.ndarray) and timestep.ndim == 0 else int(timestep)
    )  # Ensure int type

    # Initialize step_index if it's the first step
    if state.step_index is None:
      state = self._init_step_index(state, timestep_scalar)

    # Determine if corrector should be used
    use_corrector = (
        state.step_index > 0
        and state.step_index - 1 not in self.config.disable_corrector
        and state.last_sample is not None  # `last_sample` stores output of previous predictor
    )

    # Convert model_output (noise/v_pred) to x0_pred or epsilon_pred, based on prediction_type
    model_output_for_history = self.convert_model_output(state, model_output, sample)

    # Apply corrector if applicable
    if use_corrector:
      corrected_sample = self.multistep_uni_c_bh_update(
          state=state,
          this_model_output=model_output_for_history,
          last_sample=state.last_sample,
          this_sample=sample,
          order=state.this_order,
      )
      sample = corrected_sample

    # Update history buffers (model_outputs and timestep_list)
    # Shift existing elements to the left and add new one at the end.
    # `state.model_outputs` and `state.timestep_list` are fixed-size arrays.
    # Example:
    # t0:[None,...,model_output0]
    # t1:[None,..model_output0,model_output1]
    # ...
    # tn:[model_output0,model_output1,...,model_output_n]
    if state.step_index == 0:
      updated_model_outputs_history = state.model_outputs.at[-1].set(model_output_for_history)
      updated_timestep_list_history = state.timestep_list.at[-1].set(timestep_scalar)
    else:
      updated_model_outputs_history = jnp.roll(state.model_outputs, shift=-1, axis=0)
      updated_model_outputs_history = updated_model_outputs_history.at[-1].set(model_output_for_history)

      updated_timestep_list_history = jnp.roll(state.timestep_list, shift=-1)
      updated_timestep_list_history = updated_timestep_list_history.at[-1].set(timestep_scalar)

    state = state.replace(
        model_outputs=updated_model_outputs_history,
        timestep_list=updated_timestep_list_history,
    )

    # Determine the order for the current step (warmup phase logic)
    if self.config.lower_order_final:
      this_order = jnp.minimum(self.config.solver_order, len(state.timesteps) - state.step_index)
    else:
      this_order = self.config.solver_order

    # Warmup for multistep: `this_order` can't exceed `lower_order_nums + 1`
    new_this_order = jnp.minimum(this_order, state.lower_order_nums + 1)
    state = state.replace(this_order=new_this_order)

    # Ensure `this_order` is positive, should always be.
    assert new_this_order > 0, "Solver order must be positive."

    # Store current sample as `last_sample` for the *next* step's corrector
    state = state.replace(last_sample=sample)

    # UniP predictor step
    prev_sample = self.multistep_uni_p_bh_update(
        state=state,
        model_output=model_output,
        sample=sample,
        order=state.this_order,
    )

    # Update lower_order_nums for warmup
    if state.lower_order_nums < self.config.solver_order:
      state = state.replace(lower_order_nums=state.lower_order_nums + 1)

    # Upon completion, increase step index by one
    state = state.replace(step_index=state.step_index + 1)

    # Return the updated sample and state
    if not return_dict:
      return (prev_sample, state)

    return FlaxUniPCMultistepSchedulerOutput(prev_sample=prev_sample, state=state)
