# Trimmed from AI-Hypercomputer/maxtext@287af3dc488d:src/maxtext/inference/maxengine/maxengine.py (Apache-2.0); see case.toml.
from collections import defaultdict
from typing import Any, Callable
import functools
import os.path
import uuid
import warnings

from jax.experimental.layout import Format
from jax.sharding import PartitionSpec as P
import jax
import jax.numpy as jnp

from flax import linen as nn
from flax import nnx
from flax import struct
from flax.linen import partitioning as nn_partitioning
import flax

from maxtext.configs import pyconfig
from maxtext.utils.globals import MAXTEXT_PKG_DIR
from maxtext.models import models
from maxtext.layers import quantizations
from maxtext.inference import inference_utils
from maxtext.multimodal import processor as mm_processor
from maxtext.utils import lora_utils
from maxtext.utils import max_logging
from maxtext.utils import max_utils
from maxtext.utils import maxtext_utils
from maxtext.utils import sharding
from maxtext.utils import maxtext_utils_nnx
from maxtext.utils import model_creation_utils
from maxtext.common.gcloud_stub import jetstream, is_decoupled
from maxtext.common.common_types import MODEL_MODE_PREFILL, DECODING_ACTIVE_SEQUENCE_INDICATOR, MODEL_MODE_AUTOREGRESSIVE

class MaxEngine(_BaseEngine):  # pyrefly: ignore[invalid-inheritance]
  """The computational core of the generative model server.

  Engine defines an API that models must adhere to as they plug into the
  JetStream efficient serving infrastructure.
  """

  def __init__(self, config: Any, devices: Any | None = None):
    self.config = config

    # Mesh definition
    devices_array = maxtext_utils.create_device_mesh(config=config, devices=devices)
    self._mesh = jax.sharding.Mesh(devices_array, config.mesh_axes)

    # Model and Optimizer definition.
    quant = quantizations.configure_quantization(config)
    if config.pure_nnx:
      # `serve` only when the on-disk checkpoint already carries `qrhs.frozen`
      # (no full-precision kernel). For `checkpoint_is_quantized=False` with
      # quant enabled we stay in `train` mode and let AQT quantize per-forward
      # against the full-precision kernel — same numerical result as `serve`
      # for absmax calibration, just slower.
      nnx_quant_mode_str = "serve" if (quant is not None and config.checkpoint_is_quantized) else "train"
      # We need both PREFILL and AR abstract models because the cache vars inherit
      # CACHE_BATCH_PREFILL vs CACHE_BATCH from the construction model_mode, and
      # bulk_insert searches for the substring "cache_batch" in the AR-mode names.
      # Calling nnx.eval_shape directly (instead of create_nnx_abstract_model) avoids
      # the jax.set_mesh wrap that trips Flax 0.12.6 on logical-only axes like "norm".
      _create_model = model_creation_utils.get_nnx_create_model_fn(
          config, mesh=self._mesh, model_mode=MODEL_MODE_PREFILL, quant_mode_str=nnx_quant_mode_str
      )
      _create_model_ar = model_creation_utils.get_nnx_create_model_fn(
          config, mesh=self._mesh, model_mode=MODEL_MODE_AUTOREGRESSIVE, quant_mode_str=nnx_quant_mode_str
      )
      self._nnx_quant_mode_str = nnx_quant_mode_str
      with nn_partitioning.axis_rules(config.logical_axis_rules):
        abstract_model = nnx.eval_shape(_create_model)
        abstract_model_ar = nnx.eval_shape(_create_model_ar)
      self.model = abstract_model
      self.model_ar = abstract_model_ar
      # 3-way split so JIT bodies can pass (params, cache, rest) separately to
      # nnx.merge. `rest` (RNG state etc.) is materialized in load_params.
      graphdef, _, _, _ = nnx.split(abstract_model, nnx.Param, nnx.Cache, ...)
      self.graphdef = graphdef
      # Layers may bake their construction-time model_mode into static attributes,
      # so a call must be merged with the graphdef built for that same mode.
      graphdef_ar, _, _, _ = nnx.split(abstract_model_ar, nnx.Param, nnx.Cache, ...)
      self.graphdef_ar = graphdef_ar
      self._create_model_fn = _create_model
      self._nnx_rest_state = None
    else:
      self.model = models.transformer_as_linen(config, mesh=self._mesh, quant=quant, model_mode=MODEL_MODE_PREFILL)
      self.graphdef = None
      self.graphdef_ar = None
      self._create_model_fn = None
    self.replicated_sharding = jax.sharding.NamedSharding(self._mesh, P(None))

    self.abstract_params = None
    self.prefill_kv_cache_annotations = None
    self.kv_cache_annotations = None
    self.kv_cache_annotations_named = None
    self.prefill_kv_cache_shardings = None
    self.kv_cache_shardings = None
    self.state_mesh_annotations = None
    self.decode_state_shapes = None
    self.decode_state_layouts = None
    self.param_layouts = None
    self.rng = None

  def init_decode_state(
      self,
      *args,  # pylint: disable=unused-argument
      rng: PRNGKeyType | None = None,
      **kwargs,  # pylint: disable=unused-argument
  ) -> DecodeState:
    """Initialises any state which a generation step transforms."""
    if rng is None:
      rng = jax.random.PRNGKey(0)

    if self.config.pure_nnx:
      return self._init_decode_state_nnx()

    # pylint: disable=unused-argument
    def init(abstract_params):
      x = jnp.ones(
          (int(self.config.per_device_batch_size * self.mesh.size), 1),
          dtype=jnp.int32,
      )
      dummy_image = jnp.ones(
          mm_processor.get_dummy_image_shape_for_init(
              model_name=self.config.model_name, batch_size=int(self.config.per_device_batch_size * self.mesh.size)
          ),
          dtype=jnp.int32,
      )
      dummy_audio = jnp.ones(
          mm_processor.get_dummy_audio_shape_for_init(self.config),
          dtype=jnp.float32,
      )
      _, cache = self.model.apply(
          abstract_params,
          x,
          x,
          encoder_images=dummy_image if self.config.use_multimodal else None,
          encoder_audios=dummy_audio if self.config.use_audio else None,
          enable_dropout=False,
          model_mode=MODEL_MODE_AUTOREGRESSIVE,
          rngs={"params": rng},
          mutable=["cache"],
          slot=0,
      )

      next_pos = jnp.zeros(
          (int(self.config.per_device_batch_size * self.mesh.size), 1),
          dtype=jnp.int32,
      )
      generated_tokens = jnp.zeros(
          (int(self.config.per_device_batch_size * self.mesh.size), 1),
          dtype=jnp.int32,
      )
      tokens = jnp.zeros(
          (int(self.config.per_device_batch_size * self.mesh.size), 1),
          dtype=jnp.int32,
      )
      token_logp = jnp.zeros(
          (int(self.config.per_device_batch_size * self.mesh.size), 1),
          dtype=jnp.float32,
      )
      return {
          "logits": jnp.zeros(
              (
                  int(self.config.per_device_batch_size * self.mesh.size),
                  1,
                  self.config.vocab_size,
              )
          ),
          "cache": cache["cache"],
          "next_pos": next_pos,
          "generated_tokens": generated_tokens,
          "tokens": tokens,
          "token_logp": token_logp,
      }

    with nn_partitioning.axis_rules(self.config.logical_axis_rules):
      abstract_outputs = jax.eval_shape(init, self.abstract_params)
    logical_annotations = nn.get_partition_spec(abstract_outputs)

    with self._mesh, nn_partitioning.axis_rules(self.config.logical_axis_rules):
      mesh_annotations = nn.logical_to_mesh(logical_annotations)

    shardings = jax.tree_util.tree_map(
        lambda mesh_annotation: jax.sharding.NamedSharding(self._mesh, mesh_annotation),
        mesh_annotations,
    )

    @functools.partial(jax.jit, out_shardings=shardings)
    def initialize():
      return jax.tree_util.tree_map(lambda x: jnp.zeros(x.shape, x.dtype), abstract_outputs)

    init_state = initialize()
    cache = init_state["cache"]

    def is_lp(k):
      return isinstance(k, flax.linen.spmd.LogicallyPartitioned)

    self.kv_cache_annotations_named = jax.tree_util.tree_map(
        lambda x: tuple(x.logical_axes)
        if hasattr(x, "logical_axes")
        else (tuple(x.names) if hasattr(x, "names") else ()),
        cache,
        is_leaf=is_lp,
    )
    zeroed = max_utils.unbox_logicallypartioned(init_state)
    return zeroed
