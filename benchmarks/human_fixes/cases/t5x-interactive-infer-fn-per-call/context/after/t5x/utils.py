# Trimmed from google-research/t5x@4129db381d22:t5x/utils.py (Apache-2.0).
import collections
import collections.abc
from concurrent.futures import thread
import contextlib
import dataclasses
import functools
import importlib
import inspect
import os
import re
import time
import typing
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Tuple, Type, Union
import warnings

from absl import flags
from absl import logging
import clu.data
from flax import traverse_util
import flax.core
from flax.core import scope as flax_scope
from flax.linen import partitioning as flax_partitioning
import jax
from jax.experimental import global_device_array as gda_lib
from jax.experimental import multihost_utils
from jax.experimental.global_device_array import GlobalDeviceArray
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint
import seqio
from t5x import checkpoints
from t5x import optimizers
from t5x import partitioning
from t5x import state_utils
from t5x import train_state as train_state_lib
import tensorflow as tf
from tensorflow.io import gfile
import typing_extensions

def get_infer_fn(infer_step: InferStepCallable, batch_size: int,
                 train_state_axes: train_state_lib.TrainState,
                 partitioner: partitioning.BasePartitioner) -> InferFnCallable:
  """Get prediction function for the SeqIO evaluator.

  The returned prediction function should take in an enumerated dataset, make
  predictions and return in an enumerated form with the original indices and
  examples zipped together. This ensures that the predictions are compared to
  the targets in a correct order even if the dataset is sharded across
  multiple hosts and gathered in a nondeterministic way.

  jax.process_index == 0 is used as a "main host", i.e., it gathers all
  inference results and returns.

  Shape notation:
    Per replica set num replicas: R
    Per replica set batch size: B
    Number of replica sets: H
    Length: L

    Some transformations have shape transformation annotation, e.g.,
    [B, L] -> [R, B/R, L].

  Args:
    infer_step: a callable that executes one prediction step. Should not yet be
      partitioned or pmapped.
    batch_size: the number of examples in the global infer batch.
    train_state_axes: Partitioning info for the train state object.
    partitioner: partitioner to use.

  Returns:
    predict_fn: a callable which takes in the enumerated infer dataset and an
      optimizer and runs the prediction.
  """

  def infer_step_with_indices(params, batch, rng, indices):
    if 'rng' in inspect.signature(infer_step).parameters:
      res = typing.cast(InferStepWithRngCallable, infer_step)(params, batch,
                                                              rng)
    else:
      res = typing.cast(InferStepWithoutRngCallable, infer_step)(params, batch)
    return indices, res

  partitioned_infer_step = partitioner.partition(
      infer_step_with_indices,
      in_axis_resources=(train_state_axes.params,
                         partitioner.data_partition_spec, None,
                         partitioner.data_partition_spec),
      out_axis_resources=(None, None))

  data_layout = partitioner.get_data_layout(batch_size)
  shard_id = data_layout.shard_id
  num_shards = data_layout.num_shards

  per_shard_batch_size = batch_size // num_shards

  def infer_fn(ds: tf.data.Dataset,
               train_state: train_state_lib.TrainState,
               rng: Optional[jnp.ndarray] = None):
    ds_shapes = jax.tree_map(lambda x: jnp.array(x.shape), ds.element_spec)
    multihost_assert_equal(
        ds_shapes, 'Dataset element shapes do not agree across hosts. '
        'This could be an indication that the dataset is nondeterministic.')
    try:
      original_ds_length = len(ds)
      dataset_remainder = original_ds_length % batch_size  # pytype:disable=wrong-arg-types
      logging.info('length of dataset = %s', len(ds))
    except TypeError as e:
      if str(e).endswith('dataset length is unknown.'):
        logging.warning(
            'The following error is likely due to the use of TensorFlow v1 in '
            'your dataset pipeline. Verify you are not importing from '
            '`tf.compat.v1` as part of your pipeline.')
      raise e

    if dataset_remainder:
      dataset_pad_amt = batch_size - dataset_remainder
      logging.info(
          'Padding infer dataset with %d examples for even per-replica shards.',
          dataset_pad_amt)
      # Pad with the first example using an index of -1 so seqio will ignore.
      pad_ds = ds.take(1).map(lambda i, x: (np.int64(-1), x)).cache().repeat(
          dataset_pad_amt)
      ds = ds.concatenate(pad_ds)

    # Shard the infer dataset across replica sets.
    sharded_ds = ds.shard(num_shards, shard_id).batch(
        per_shard_batch_size, drop_remainder=True)
    multihost_assert_equal(
        jnp.array(len(sharded_ds)),
        'Dataset lengths do not agree across hosts.')

    logging.info(
        'The infer dataset is sharded into %d shards with per-shard '
        'batch size of %d', num_shards, per_shard_batch_size)

    # Run inference for each replica set.
    batched_results, all_indices = [], []
    for index, infer_batch in sharded_ds.as_numpy_iterator():
      if rng is None:
        step_rng = None
      else:
        step_rng, rng = jax.random.split(rng)
      # Run fast inference on batch.
      # [B, ...] -> [B * shard_count, ...]
      # partitioned_infer_step executes infer_step on sharded batched data, and
      # returns de-sharded batched indices and result replicated on all hosts.

      if jax.config.jax_array and jax.process_count() > 1:
        inputs = multihost_utils.host_local_array_to_global_array(
            (infer_batch, step_rng, index), partitioner.mesh,
            (partitioner.data_partition_spec, None,
             partitioner.data_partition_spec))
        batch_indices, batch_result = partitioned_infer_step(
            train_state.params, *inputs)
        batch_indices, batch_result = multihost_utils.global_array_to_host_local_array(
            (batch_indices, batch_result), partitioner.mesh, (None, None))
      else:
        batch_indices, batch_result = partitioned_infer_step(
            train_state.params, infer_batch, step_rng, index)
        logging.info('Inference of batch %s done.', index)

      def _copy_to_host_async(x):
        if isinstance(x, GlobalDeviceArray):
          if hasattr(x, 'addressable_data'):
            # GDA is fully replicated
            x.addressable_data(0).copy_to_host_async()
            return x.addressable_data(0)
          else:
            x.local_data(0).copy_to_host_async()  # GDA is fully replicated
            return x.local_data(0)
        else:
          x.copy_to_host_async()
          return x

      try:
        batch_result = jax.tree_map(_copy_to_host_async, batch_result)
        batch_indices = jax.tree_map(_copy_to_host_async, batch_indices)
      except AttributeError:
        # Similar to jax.device_get, we skip transfers for non DeviceArrays.
        pass

      batched_results.append(batch_result)
      all_indices.append(batch_indices)

    logging.info('Inference of all batches done.')
    all_inferences = batched_results

    # List[B * shard_count, ...] -> [B * shard_count * batch_count, ...]
    all_inferences = jax.tree_map(lambda *args: np.concatenate(args),
                                  *all_inferences)
    all_indices = np.concatenate(all_indices)

    all_inferences, all_indices = _remove_padding(all_inferences, all_indices)

    # Results are returned from infer_step out of order due to shard operation.
    # Note: remove padding first, as -1 indices would mess up this operation.
    # Note: all_inferences may be a PyTree, not just an array, e.g. if
    # `infer_step` is `model.predict_batch_with_aux`.
    all_inferences = jax.tree_map(lambda x: x[all_indices], all_inferences)
    all_indices = all_indices[all_indices]

    # aux_values is supposed to be a dictionary that maps strings to a set of
    # auxiliary values.
    #
    # We don't want to flatten/unflatten the aux values. We want to preserve the
    # unflattened values with the type List[Mapping[str, Sequence[Any]]]. We do
    # this as a memory optimization to avoid lots of redundant keys if we'd
    # instead had List[Mapping[str, Any]].
    #
    # It has shape Mapping[str, [B * shard_count * batch_count, ...]]. That is,
    # the first dimension of each of the values in aux_values is equal to
    # len(all_inferences).
    aux_values = None
    if (isinstance(all_inferences, tuple) and len(all_inferences) == 2 and
        isinstance(all_inferences[1], Mapping)):
      all_inferences, aux_values = all_inferences

    # Translate to List[...] by flattening inferences making sure to
    # preserve structure of individual elements (inferences are not assumed to
    # be simple np.array). Finally, zip inferences with corresponding indices
    # and convert leaf np.arrays into lists.
    all_inferences, struct = jax.tree_util.tree_flatten(all_inferences)
    all_inferences = map(
        functools.partial(jax.tree_util.tree_unflatten, struct),
        zip(*all_inferences))
    indices_and_outputs = list(zip(all_indices, all_inferences))
    indices_and_outputs = jax.tree_map(lambda x: np.array(x).tolist(),
                                       indices_and_outputs)
    if len(indices_and_outputs) != original_ds_length:
      raise ValueError(
          'Size of indices_and_outputs does not match length of original '
          'dataset: %d versus %d' %
          (len(indices_and_outputs), original_ds_length))

    if aux_values is None:
      return indices_and_outputs
    else:
      aux_values = jax.tree_map(lambda x: np.array(x).tolist(), aux_values)
      return indices_and_outputs, aux_values

  return infer_fn
