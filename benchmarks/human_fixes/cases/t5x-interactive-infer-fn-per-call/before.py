# Trimmed from google-research/t5x@b505d57cea7c:t5x/interactive_model.py (Apache-2.0); see case.toml.
import abc
from collections.abc import Mapping, Sequence
import enum
import functools
import inspect
import itertools
import logging
import os
import re
from typing import Any, Callable, Iterator, Optional, Tuple, Union

import clu.data.dataset_iterator
import jax
from jax import random
from jax.experimental import multihost_utils
import numpy as np
import seqio
from t5x import checkpoints
from t5x import models
from t5x import partitioning
from t5x import trainer as trainer_lib
from t5x import utils
from t5x.infer import _extract_tokens_and_aux_values
from t5x.infer import _Inferences
import tensorflow as tf
import tensorflow_datasets as tfds

class InteractiveModel(abc.ABC):
  """Wrapper around T5X components to enable interactive train/infer/eval."""

  def __init__(self,
               batch_size: int,
               task_feature_lengths: Mapping[str, int],
               output_dir: str,
               partitioner: partitioning.BasePartitioner,
               model: models.BaseTransformerModel,
               dtype: str,
               restore_mode: str,
               checkpoint_path: str,
               input_shapes: Mapping[str, utils.Array],
               input_types: Optional[Mapping[str, utils.DType]] = None,
               init_random_seed: int = 42,
               add_eos: bool = True):
    """Init function.

    Configures the output directory, RNGs, and partitioner given the provided
    arguments.

    Args:
      batch_size: number of examples per batch for training, inference, and
        evaluation.
      task_feature_lengths: dictionary mapping feature key to maximum length
        (int) for that feature. If feature is longer than this length after
        preprocessing, the feature will be truncated. May be set to None to
        avoid truncation.
      output_dir: Path to directory where we will write temporary files and
        final results.
      partitioner: the partitioner that defines how we divide and replicate
        machine learning model parameters, activations, and data across the
        accelerator devices (TPU/GPU). See https://github.com/google-research/t5x/blob/main/docs/usage.md/partitioning for
        details.
      model: the model object to use for training, inference, and evaluation.
      dtype: The dtype to restore ('float32' or 'bfloat16'), or None to load as
        saved.
      restore_mode: One of 'specific', 'latest', or 'all'. `specific` loads the
        checkpoint specified by `path`. `latest` loads the most recent
        checkpoint in the directory specified by `path`. `all` sequentially
        loads all of checkpoints in the directory `path`.
      checkpoint_path: Path(s) to checkpoint to restore from or directory
        (depending on `restore_mode`).
      input_shapes: a mapping from key to array shape for each feature in the
        global (unsharded) input batch.
      input_types: a mapping from key to array type for each feature in the
        global (unshared) input batch. If not provided, the type is assumed to
        be `jnp.float32`.
      init_random_seed: the random seed used to initialize all RNGs.
      add_eos: whether or not to add the EOS token to inputs/targets.

    Raises:
      ValueError: the partitioner has an incorrect submesh, or the checkpoint
        restore function returned a sequence of TrainStates, when it should have
        returned a single TrainState.
    """
    self._batch_size = batch_size
    self._task_feature_lengths = task_feature_lengths
    # --------------------------------------------------------------------------
    # Configure the output directory
    # --------------------------------------------------------------------------
    self._output_dir = output_dir
    # Remove double-slashes in directory path to avoid inconsistencies.
    self._output_dir = re.sub(r"(?<!gs:)([\/]{2,})", "/", self._output_dir)
    if not os.path.exists(self._output_dir):
      os.mkdir(self._output_dir)

    # --------------------------------------------------------------------------
    # Initialize RNGs
    # --------------------------------------------------------------------------
    self._init_random_seed = init_random_seed
    random_seed = multihost_utils.broadcast_one_to_all(
        np.int32(self._init_random_seed))
    utils.set_hardware_rng_ops()

    rng = random.PRNGKey(random_seed)
    self._init_rng, self._trainer_rng = random.split(rng, 2)

    # --------------------------------------------------------------------------
    # Initialize the partitioner.
    # --------------------------------------------------------------------------
    if partitioner._model_parallel_submesh:
      num_partitions = np.prod(partitioner._model_parallel_submesh)
    else:
      num_partitions = partitioner._num_partitions
    if jax.device_count() % num_partitions != 0:
      raise ValueError(
          "The number of devices available must be a multiple of the number of",
          f" partitions. There are {jax.device_count()} devices available, but",
          f" the number of partitions is set to {num_partitions}. Please",
          " provide a different number of partitions.")
    self._partitioner = partitioner

    # --------------------------------------------------------------------------
    # Create and save a checkpoint manager.
    # --------------------------------------------------------------------------
    logging.info("Initializing model, optimizer, and step functions.")
    self._model = model
    self._feature_converter = self._model.FEATURE_CONVERTER_CLS(pack=False)
    self._input_shapes = input_shapes
    self._input_types = input_types
    # Save the model vocabulary as features.
    output_features = {
        "inputs":
            seqio.Feature(
                vocabulary=self._model.input_vocabulary, add_eos=add_eos),
        "targets":
            seqio.Feature(
                vocabulary=self._model.output_vocabulary, add_eos=add_eos)
    }
    self._features = dict(sorted(output_features.items()))

    # Define restore and save checkpoints.
    if checkpoint_path:
      self._restore_checkpoint_cfg = utils.RestoreCheckpointConfig(
          dtype=dtype, mode=restore_mode, path=checkpoint_path, use_gda=False)
    else:
      self._restore_checkpoint_cfg = None
    self._save_checkpoint_cfg = utils.SaveCheckpointConfig(
        dtype=dtype, keep=5, save_dataset=False, use_gda=False, period=1000)
    self._train_state_initializer = utils.TrainStateInitializer(
        optimizer_def=self._model.optimizer_def,
        init_fn=self._model.get_initial_variables,
        input_shapes=self._input_shapes,
        input_types=self._input_types,
        partitioner=self._partitioner)

    # Initialize checkpoint manager.
    self._checkpoint_manager = utils.LegacyCheckpointManager(
        save_cfg=self._save_checkpoint_cfg,
        restore_cfg=self._restore_checkpoint_cfg,
        train_state_shape=(
            self._train_state_initializer.global_train_state_shape),
        partitioner=self._partitioner,
        ds_iter=None,
        model_dir=self._output_dir,
        use_gda=False)

    # --------------------------------------------------------------------------
    # Restore a model from a checkpoint or from scratch.
    # --------------------------------------------------------------------------
    def get_state(rng):
      return self._train_state_initializer.from_scratch(rng).state_dict()

    restore_cfgs = []
    # 1. From a checkpoint specified by `self._restore_checkpoint_cfg.path`, if
    # set.
    if self._restore_checkpoint_cfg:
      restore_cfgs.append(self._restore_checkpoint_cfg)
    # 2. If no checkpoint provided, look for one in the model directory.
    if self._restore_checkpoint_cfg is not None:
      state_transforms_for_restore = [
          functools.partial(fn, is_resuming=True)
          for fn in self._restore_checkpoint_cfg.state_transformation_fns
      ]
    else:
      state_transforms_for_restore = []
    restore_cfgs.append(
        utils.RestoreCheckpointConfig(
            path=self._output_dir,
            mode="latest",
            dtype=self._save_checkpoint_cfg.dtype
            if self._save_checkpoint_cfg else "float32",
            checkpointer_cls=self._save_checkpoint_cfg.checkpointer_cls
            if self._save_checkpoint_cfg else checkpoints.Checkpointer,
            # Restore dataset state if it is being saved.
            restore_dataset=(self._save_checkpoint_cfg and
                             self._save_checkpoint_cfg.save_dataset),
            state_transformation_fns=state_transforms_for_restore))

    # Restore the model using a checkpoint.
    valid_restore_cfg, restore_paths = utils.get_first_valid_restore_config_and_paths(
        restore_cfgs)
    self._train_state = self._checkpoint_manager.restore(
        restore_paths, valid_restore_cfg,
        utils.get_fallback_state(valid_restore_cfg, get_state, self._init_rng))

    # 3. If no checkpoint to restore, init from scratch.
    if self._train_state is None:
      self._train_state = self._train_state_initializer.from_scratch(
          self._init_rng)
    self._train_state_axes = self._train_state_initializer.train_state_axes

    # Log the variable shapes information and write to a file.
    log_file = os.path.join(self._output_dir, "model-info.txt")
    utils.log_model_info(log_file,
                         self._train_state_initializer.global_train_state_shape,
                         self._partitioner)

    # --------------------------------------------------------------------------
    # Trainer
    # --------------------------------------------------------------------------
    if isinstance(self._train_state, Sequence):
      raise ValueError(
          "Expected a single train state, but instead received a Sequence.")
    self._trainer = trainer_lib.Trainer(
        model=self._model,
        train_state=self._train_state,
        partitioner=self._partitioner,
        eval_names=[],
        summary_dir=self._output_dir,
        train_state_axes=self._train_state_axes,
        rng=self._trainer_rng,
        learning_rate_fn=utils.create_learning_rate_scheduler(),
        num_microbatches=None)

  def infer_with_preprocessors(
      self,
      mode: InferenceType,
      examples: Sequence[Union[str, dict[str, str]]],
      preprocessors: Sequence[Callable[..., tf.data.Dataset]],
      **inference_kwargs,
  ) -> _Inferences:
    """Infer function.

    Args:
      mode: Either 'score' to compute the log likelihood of given targets, or
        'predict_with_aux' to score and decode targets.
      examples: a single batch of examples that should be transformed into a
        tf.data.Dataset. The examples can either take the form of a string (ex:
        a single input for inference), or a dictionary mapping "input"/"target"
        to a string containing that element.
      preprocessors: list(callable), an optional list of functions that receive
        a tf.data.Dataset and return a tf.data.Dataset. These will be executed
        sequentially and the final dataset must include features matching
        `self._features`.
      **inference_kwargs: additional keyword arguments to pass to the inference
        function (e.g., `model.predict_batch_with_aux` or `score_batch`).

    Returns:
      Returns a tuple of predictions/scores and any auxiliary values.
    """
    # --------------------------------------------------------------------------
    # Parse Mode
    # --------------------------------------------------------------------------
    if mode == InferenceType.PREDICT_WITH_AUX:
      infer_step = self._model.predict_batch_with_aux
    elif mode == InferenceType.SCORE:
      infer_step = self._model.score_batch
    else:
      raise ValueError("Mode must be `predict_with_aux`, or `score`,"
                       f" but instead was {mode}.")
    infer_fn = functools.partial(
        utils.get_infer_fn(
            infer_step=functools.partial(infer_step, **inference_kwargs),
            batch_size=self._batch_size,
            train_state_axes=self._train_state_initializer.train_state_axes,
            partitioner=self._partitioner,
        ),
        train_state=self._train_state,
    )

    # --------------------------------------------------------------------------
    # Construct a dataset and dataset iterator.
    # --------------------------------------------------------------------------
    dataset = get_dataset_from_natural_text_examples(
        examples,
        preprocessors=preprocessors,
        task_feature_lengths=self._task_feature_lengths,
        features=self._features)
    model_dataset = self._feature_converter(
        dataset, task_feature_lengths=self._task_feature_lengths)
    # Zip task and model features.
    infer_dataset = tf.data.Dataset.zip((dataset, model_dataset))
    # Create batches and index them.
    infer_dataset = infer_dataset.padded_batch(
        self._batch_size, drop_remainder=False).enumerate()
    infer_dataset_iter: Iterator[Tuple[int, Any]] = iter(
        infer_dataset.prefetch(tf.data.experimental.AUTOTUNE))

    # --------------------------------------------------------------------------
    # Run inference
    # --------------------------------------------------------------------------
    # Main Loop over "batches".
    all_inferences = []
    all_aux_values = {}
    for chunk, chunk_batch in infer_dataset_iter:
      # Load the dataset for the next chunk. We can't use `infer_dataset_iter`
      # directly since `infer_fn` needs to know the exact size of each chunk,
      # which may be smaller for the final one.
      chunk_dataset = tf.data.Dataset.from_tensor_slices(chunk_batch)
      chunk_dataset.cache().prefetch(tf.data.experimental.AUTOTUNE)

      # Unzip chunk dataset in to pretokenized and model datasets.
      task_dataset = chunk_dataset.map(
          lambda p, m: p, num_parallel_calls=tf.data.experimental.AUTOTUNE)
      model_dataset = chunk_dataset.map(
          lambda p, m: m, num_parallel_calls=tf.data.experimental.AUTOTUNE)

      # Get a chunk-specific RNG key.
      chunk_rng = jax.random.fold_in(jax.random.PRNGKey(0), chunk)

      inferences = _extract_tokens_and_aux_values(
          infer_fn(model_dataset.enumerate(), rng=chunk_rng))

      predictions, aux_values = inferences
      accumulated_inferences = []
      for idx, inputs in task_dataset.enumerate().as_numpy_iterator():
        prediction = predictions[idx]
        # Decode predictions if applicable.
        if mode == InferenceType.PREDICT_WITH_AUX:
          prediction = self._features["targets"].vocabulary.decode_tf(
              tf.constant(prediction)).numpy()
        accumulated_inferences.append((inputs, prediction))
      all_inferences += accumulated_inferences
      # Accumulate aux values over batches.
      if not all_aux_values:
        all_aux_values = aux_values
      else:
        for key, values in aux_values.items():
          all_aux_values[key] += values

    return all_inferences, all_aux_values
