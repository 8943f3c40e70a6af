# Trimmed from AI-Hypercomputer/maxdiffusion@3d5ef047b500:src/maxdiffusion/schedulers/scheduling_unipc_multistep_flax.py (Apache-2.0); see case.toml.
from typing import List, Optional, Tuple, Union

import flax
import jax
import jax.numpy as jnp
from functools import partial

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
    timestep_list: jnp.ndarray = (
        None  # Stores corresponding timesteps for `model_outputs`
    )

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
        model_output: jnp.ndarray,
        sample: jnp.ndarray,
        order: int,
    ) -> jnp.ndarray:
        """
        One step for the UniP (B(h) version) - the Predictor.
        """
        if self.config.solver_p:
            raise NotImplementedError(
                "Nested `solver_p` is not implemented in JAX version yet."
            )

        m0 = state.model_outputs[
            self.config.solver_order - 1
        ]  # Most recent stored converted model output
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

        def rk_d1_loop_body(i, carry):
            # Loop from i = 0 to order-2
            rks, D1s = carry
            history_idx = self.config.solver_order - 2 - i
            mi = state.model_outputs[history_idx]
            si_val = state.timestep_list[history_idx]

            alpha_si, sigma_si = self._sigma_to_alpha_sigma_t(
                state.sigmas[self.index_for_timestep(state, si_val)]
            )
            lambda_si = jnp.log(alpha_si + 1e-10) - jnp.log(sigma_si + 1e-10)

            rk = (lambda_si - lambda_s0) / h
            Di = (mi - m0) / rk

            rks = rks.at[i].set(rk)
            D1s = D1s.at[i].set(Di)
            return rks, D1s

        rks_init = jnp.zeros(self.config.solver_order, dtype=h.dtype)
        D1s_init = jnp.zeros((self.config.solver_order - 1, *m0.shape), dtype=m0.dtype)
        if self.config.solver_order == 1:
            # Dummy D1s array. It will not be used if order == 1
            D1s_init = jnp.zeros((1, *m0.shape), dtype=m0.dtype)
        rks, D1s = jax.lax.fori_loop(
            0, order - 1, rk_d1_loop_body, (rks_init, D1s_init)
        )
        rks = rks.at[order - 1].set(1.0)

        hh = -h if self.config.predict_x0 else h
        h_phi_1 = jnp.expm1(hh)

        if self.config.solver_type == "bh1":
            B_h = hh
        elif self.config.solver_type == "bh2":
            B_h = jnp.expm1(hh)
        else:
            raise NotImplementedError()

        def rb_loop_body(i, carry):
            R, b, current_h_phi_k, factorial_val = carry
            R = R.at[i].set(jnp.power(rks, i))
            b = b.at[i].set(current_h_phi_k * factorial_val / B_h)

            def update_fn(vals):
                _h_phi_k, _fac = vals
                next_fac = _fac * (i + 2)
                next_h_phi_k = _h_phi_k / hh - 1.0 / next_fac
                return next_h_phi_k, next_fac

            current_h_phi_k, factorial_val = jax.lax.cond(
                i < order - 1,
                update_fn,
                lambda vals: vals,
                (current_h_phi_k, factorial_val),
            )
            return R, b, current_h_phi_k, factorial_val

        R_init = jnp.zeros(
            (self.config.solver_order, self.config.solver_order), dtype=h.dtype
        )
        b_init = jnp.zeros(self.config.solver_order, dtype=h.dtype)
        init_h_phi_k = h_phi_1 / hh - 1.0
        init_factorial = 1.0
        R, b, _, _ = jax.lax.fori_loop(
            0, order, rb_loop_body, (R_init, b_init, init_h_phi_k, init_factorial)
        )

        if len(D1s) > 0:
            D1s = jnp.stack(D1s, axis=1)  # Resulting shape (B, K, C, H, W)

        def solve_for_rhos_p(R_mat, b_vec, current_order):
            # Create a mask for the top-left (current_order - 1) x (current_order - 1) sub-matrix
            mask_size = self.config.solver_order - 1
            mask = jnp.arange(mask_size) < (current_order - 1)
            mask_2d = mask[:, None] & mask[None, :]

            # Pad R with identity and b with zeros for a safe solve
            R_safe = jnp.where(
                mask_2d,
                R_mat[:mask_size, :mask_size],
                jnp.eye(mask_size, dtype=R_mat.dtype),
            )
            b_safe = jnp.where(mask, b_vec[:mask_size], 0.0)

            # Solve the system and mask the result
            solved_rhos = jnp.linalg.solve(R_safe, b_safe)
            return jnp.where(mask, solved_rhos, 0.0)

        # Handle the special case for order == 2
        if self.config.solver_order == 1:
            # Dummy rhos_p_padded for tracing.
            rhos_p_order2 = jnp.zeros(1, dtype=x.dtype)
        else:
            rhos_p_order2 = (
                jnp.zeros(self.config.solver_order - 1, dtype=x.dtype).at[0].set(0.5)
            )

        # Get the result for the general case
        rhos_p_general = solve_for_rhos_p(R, b, order)

        # Select the appropriate result based on the order
        rhos_p = jnp.where(order == 2, rhos_p_order2, rhos_p_general)

        pred_res = jax.lax.cond(
            order > 1,
            lambda _: jnp.einsum("k,bkc...->bc...", rhos_p, D1s).astype(x.dtype),
            # False branch: return a zero tensor with the correct shape.
            lambda _: jnp.zeros_like(x),
            operand=None,
        )

        if self.config.predict_x0:
            x_t_ = sigma_t / sigma_s0 * x - alpha_t * h_phi_1 * m0
            x_t = x_t_ - alpha_t * B_h * pred_res
        else:  # Predict epsilon
            x_t_ = alpha_t / alpha_s0 * x - sigma_t * h_phi_1 * m0
            x_t = x_t_ - sigma_t * B_h * pred_res

        return x_t.astype(x.dtype)

    @partial(jax.jit, static_argnums=(0, 5))  # self is static_argnum=0
    def step(
        self,
        state: UniPCMultistepSchedulerState,
        model_output: jnp.ndarray,  # This is the direct output from the diffusion model (e.g., noise prediction)
        timestep: Union[
            int, jnp.ndarray
        ],  # Current discrete timestep from the scheduler's sequence
        sample: jnp.ndarray,  # Current noisy sample (latent)
        return_dict: bool = True,
        generator: Optional[jax.random.PRNGKey] = None,  # JAX random key
    ) -> Union[FlaxUniPCMultistepSchedulerOutput, Tuple[jnp.ndarray]]:
        """
        Predict the sample from the previous timestep by reversing the SDE. This function propagates the sample with
        the multistep UniPC.
        """
        if state.timesteps is None:
            raise ValueError(
                "Number of inference steps is 'None', you need to run 'set_timesteps' after creating the scheduler"
            )

        timestep_scalar = jnp.array(timestep)

        # Initialize step_index if it's the first step
        if state.step_index is None:
            state = self._init_step_index(state, timestep_scalar)

        # Determine if corrector should be used
        use_corrector = (
            (state.step_index > 0)
            & (
                ~jnp.isin(
                    state.step_index - 1, jnp.array(self.config.disable_corrector)
                )
            )
            & (state.last_sample is not None)
        )

        # Convert model_output (noise/v_pred) to x0_pred or epsilon_pred, based on prediction_type
        model_output_for_history = self.convert_model_output(
            state, model_output, sample
        )

        # Apply corrector if applicable
        sample = jax.lax.cond(
            use_corrector,
            lambda: self.multistep_uni_c_bh_update(
                state=state,
                this_model_output=model_output_for_history,
                last_sample=state.last_sample,
                this_sample=sample,
                order=state.this_order,
            ),
            lambda: sample,
        )

        # Update history buffers (model_outputs and timestep_list)
        # Shift existing elements to the left and add new one at the end.
        # `state.model_outputs` and `state.timestep_list` are fixed-size arrays.
        # Example:
        # t0:[None,...,model_output0]
        # t1:[None,..model_output0,model_output1]
        # ...
        # tn:[model_output0,model_output1,...,model_output_n]
        def step_idx0_branch():
            updated_model_outputs_history = state.model_outputs.at[-1].set(
                model_output_for_history
            )
            updated_timestep_list_history = state.timestep_list.at[-1].set(
                timestep_scalar
            )
            return updated_model_outputs_history, updated_timestep_list_history

        def non_step_idx0_branch():
            updated_model_outputs_history = jnp.roll(
                state.model_outputs, shift=-1, axis=0
            )
            updated_model_outputs_history = updated_model_outputs_history.at[-1].set(
                model_output_for_history
            )

            updated_timestep_list_history = jnp.roll(state.timestep_list, shift=-1)
            updated_timestep_list_history = updated_timestep_list_history.at[-1].set(
                timestep_scalar
            )
            return updated_model_outputs_history, updated_timestep_list_history

        updated_model_outputs_history, updated_timestep_list_history = jax.lax.cond(
            state.step_index == 0, step_idx0_branch, non_step_idx0_branch
        )
        state = state.replace(
            model_outputs=updated_model_outputs_history,
            timestep_list=updated_timestep_list_history,
        )

        # Determine the order for the current step (warmup phase logic)
        this_order = jnp.where(
            self.config.lower_order_final,
            jnp.minimum(
                self.config.solver_order, len(state.timesteps) - state.step_index
            ),
            self.config.solver_order,
        )

        # Warmup for multistep: `this_order` can't exceed `lower_order_nums + 1`
        new_this_order = jnp.minimum(this_order, state.lower_order_nums + 1)
        state = state.replace(this_order=new_this_order)

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
        new_lower_order_nums = jnp.where(
            state.lower_order_nums < self.config.solver_order,
            state.lower_order_nums + 1,
            state.lower_order_nums,
        )
        state = state.replace(lower_order_nums=new_lower_order_nums)
        # Upon completion, increase step index by one
        state = state.replace(step_index=state.step_index + 1)

        # Return the updated sample and state
        if not return_dict:
            return (prev_sample, state)

        return FlaxUniPCMultistepSchedulerOutput(prev_sample=prev_sample, state=state)
