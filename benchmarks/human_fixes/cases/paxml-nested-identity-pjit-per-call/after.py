# Trimmed from google/paxml@e4fad96057a6:paxml/partitioning.py (Apache-2.0); see case.toml.
import abc
import dataclasses
import functools
import json
import pprint
from typing import Any, Protocol, Sequence

from absl import logging
from clu import platform
from etils import epath
from flax.core import frozen_dict
import jax
from jax import core
from jax import numpy as jnp
from jax.experimental import pjit
import numpy as np
from paxml import checkpoint_types
from paxml import tasks_lib
from paxml import train_states
from paxml import trainer_lib
from praxis import base_input
from praxis import base_layer
from praxis import lazy_loader
from praxis import pax_fiddle
from praxis import py_utils
from praxis import pytypes
from praxis import trees

class PjitPartitioner(Partitioner):
  """Used for partitioning a step function of a SPMD model."""

  def __init__(
      self,
      init_is_eval: bool,
      reshard_inputs: bool,
      task: pax_fiddle.Config[tasks_lib.SingleTask] | tasks_lib.SingleTask,
      device_mesh: np.ndarray | None = None,
  ):
    """Constructor.

    Args:
      init_is_eval: Whether it should set is_eval=True when running
        abstract_init_with_metadata.
      reshard_inputs: Whether to reshard model inputs before running the
        partitioned function. Only applicable for pjit.
      task: The config or instance for the task, needed to create global mesh.
      device_mesh: Optional custom device mesh.
    """
    super().__init__(init_is_eval)
    self._reshard_inputs = reshard_inputs
    logging.info('Using SPMD sharding for model parallelism.')

    # Creates global mesh.
    model = task.model
    self._mesh_names = model.mesh_axis_names
    if device_mesh is None:
      logging.info('creating mesh with py_utils.create_device_mesh')
      device_mesh = py_utils.create_device_mesh(
          model.ici_mesh_shape,
          model.dcn_mesh_shape,
          contiguous_submeshes=model.contiguous_submeshes,
      )
    else:
      logging.info('Using provided mesh for PjitPartitioner')
    logging.info('device_mesh: %s', device_mesh)
    self._global_mesh = jax.sharding.Mesh(device_mesh, model.mesh_axis_names)

    # Pjit'ed function to preprocess the prng key.
    self._broadcast_key_fn = None

  def preprocess_prng_key(self, prng_key: PRNGKey) -> PRNGKey:
    """Preprocess the key before using it to run the partitioned function."""
    if not self._broadcast_key_fn:
      # The prng keys are already created on device with jax.random.split. We
      # broadcast it with an identity pjit function to avoid doing it in the
      # loop where a multi-slice program could be generated.
      def _broadcast_key(k):
        rep_sharding = jax.sharding.NamedSharding(
            self._global_mesh, jax.sharding.PartitionSpec()
        )
        return pjit.pjit(
            _identity, in_shardings=rep_sharding, out_shardings=rep_sharding
        )(k)

      self._broadcast_key_fn = _broadcast_key

    return self._broadcast_key_fn(prng_key)
