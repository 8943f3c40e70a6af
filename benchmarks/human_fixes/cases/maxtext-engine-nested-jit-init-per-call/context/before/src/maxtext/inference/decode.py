# Trimmed from AI-Hypercomputer/maxtext@287af3dc488d:src/maxtext/inference/decode.py (Apache-2.0).
import os
from typing import Sequence, Any
import numpy as np
import jax
import jax.numpy as jnp

from absl import app

from maxtext.configs import pyconfig
from maxtext.common import profiler
from maxtext.common.gcloud_stub import jetstream, is_decoupled
from maxtext.inference.maxengine import maxengine
from maxtext.multimodal import processor as mm_processor
from maxtext.multimodal import utils as mm_utils
from maxtext.utils import max_utils

def main(argv: Sequence[str]) -> None:
  jax.config.update("jax_default_prng_impl", "unsafe_rbg")
  os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"

  config = pyconfig.initialize(argv)
  _validate_config(config)
  jax.config.update("jax_use_shardy_partitioner", config.shardy)
  max_utils.print_system_information()

  engine = maxengine.MaxEngine(config)
  rng = jax.random.PRNGKey(1234)
  rng, rng_load_params = jax.random.split(rng)
  params = engine.load_params(rng_load_params)
  prof = profiler.Profiler(config)

  text = config.prompt
  prefill_length = config.max_prefill_predict_length
  processor_outputs = mm_utils.PreprocessorOutput()
  if config.use_multimodal:
    processor_outputs = mm_processor.preprocess_mm_data(config)
    image_offsets = mm_processor.get_image_offsets(config=config, processor_output=processor_outputs)

    prefill_length -= image_offsets
    text = mm_processor.reformat_prompt(
        prompt=config.prompt,
        image_placeholder=config.image_placeholder,
        video_placeholder=config.video_placeholder,
        model_name=config.model_name,
        num_images=processor_outputs.num_images,
        num_videos=getattr(processor_outputs, "num_videos", 0),
    )

  metadata = engine.get_tokenizer()
  tokenizer_model = engine.build_tokenizer(metadata)
  token_params_is_stub = getattr(_token_params_ns, "_IS_STUB", False)
  engine_api_is_stub = getattr(engine_api, "_IS_STUB", False)
  if is_decoupled() and (token_params_is_stub or engine_api_is_stub):
    raise RuntimeError(
        "JetStream disabled by DECOUPLE_GCLOUD=TRUE or stubbed; decode requires the JetStream tokenizer. "
        "Unset DECOUPLE_GCLOUD or install JetStream to run decode."
    )

  try:
    # TODO: update jetstream.engine.tokenizer_api.Tokenizer to maintain tokenizer state.
    has_chat_template = getattr(tokenizer_model.tokenizer, "chat_template", False)  # pytype: disable=attribute-error
  except AttributeError as _:
    has_chat_template = False
  is_bos = config.add_bos and not has_chat_template
  tokens, true_length = tokenizer_model.encode(text, is_bos=is_bos, prefill_lengths=[prefill_length])

  position_ids = None
  mrope_position_deltas = None

  if config.use_multimodal:
    tokens = mm_processor.prepare_text_for_image_fusion(tokens=tokens, config=config, processor_output=processor_outputs)
    true_length += image_offsets  # pyrefly: ignore[unbound-name]

    if config.use_mrope:
      from maxtext.multimodal import processor_qwen3_omni  # pylint: disable=import-outside-toplevel

      position_ids, mrope_position_deltas = processor_qwen3_omni.get_rope_index(
          input_ids=tokens[np.newaxis, :],  # Add batch dimension for processing
          image_grid_thw=processor_outputs.pixel_grid_thw,  # pytype: disable=attribute-error
          video_grid_thw=processor_outputs.video_grid_thw,  # pytype: disable=attribute-error
          attention_mask=np.ones_like(tokens)[np.newaxis, :],
          use_audio_in_video=config.use_audio and getattr(processor_outputs, "num_videos", 0) > 0,
          audio_lengths=processor_outputs.audio_lengths,  # pytype: disable=attribute-error
          second_per_grids=processor_outputs.video_second_per_grid,  # pytype: disable=attribute-error
          spatial_merge_size=config.spatial_merge_size_for_vit,  # pytype: disable=attribute-error
          position_id_per_seconds=config.position_id_per_seconds,
          config=config,
      )

  assert (
      true_length <= config.max_prefill_predict_length
  ), f"Input token length {true_length} is longer than {config.max_prefill_predict_length=}"
  assert config.quantization != "fp8", "fp8 on NVIDIA GPUs is not supported in decode.py yet"
  assert config.quantization != "nanoo_fp8", "NANOO fp8 on AMD MI300/MI325 GPUs is not supported in decode.py yet"

  batch_size = int(config.per_device_batch_size * jax.device_count())
  assert (
      0 < _NUM_STREAMS <= batch_size
  ), f"The number of streams {_NUM_STREAMS} must be > 0 and <= batch size {batch_size}"

  prefill_result_list = []
  first_token_list = []
  sampled_tokens_list = []

  prof.activate(optional_postfix="trace")

  # Prefill
  rng, rng_prefill = jax.random.split(rng)  # Split RNG before calling prefill
  for i in range(_NUM_STREAMS):
    with jax.profiler.StepTraceAnnotation("prefill", stream=i):
      prefill_result, first_token = engine.prefill(
          params=params,
          padded_tokens=tokens,
          positions=position_ids,  # pyrefly: ignore[bad-argument-type]
          mrope_deltas=mrope_position_deltas,  # pyrefly: ignore[bad-argument-type]
          images=processor_outputs.pixel_values if config.use_multimodal else None,  # pyrefly: ignore[bad-argument-type]
          image_masks=processor_outputs.pixel_mask
          if config.use_multimodal and "llama4" in config.model_name
          else None,  # pyrefly: ignore[bad-argument-type]
          videos=getattr(processor_outputs, "video_values", None) if config.use_multimodal else None,
          video_masks=getattr(processor_outputs, "video_mask", None) if config.use_multimodal else None,
          video_grid_thw=getattr(processor_outputs, "video_grid_thw", None) if config.use_multimodal else None,
          audio_values=processor_outputs.audio_values if config.use_audio else None,  # pyrefly: ignore[bad-argument-type]
          audio_masks=processor_outputs.audio_mask if config.use_audio else None,  # pyrefly: ignore[bad-argument-type]
          true_length=true_length,
          rng=rng_prefill,
          slot=i,
      )
    prefill_result_list.append(prefill_result)
    first_token_list.append(first_token)

  # Insert
  rng, rng_init_decode = jax.random.split(rng)
  decode_state = engine.init_decode_state(rng_init_decode)
  for i in range(_NUM_STREAMS):
    decode_state = engine.insert(prefill_result_list[i], decode_state, slot=i)

  # Generate
  prof_deactivated = False
  steps = range(config.max_prefill_predict_length, config.max_target_length)
  sampled_tokens_list.append(_batch_first_result_token(first_token_list, batch_size))
  for i in steps:
    rng, rng_generate = jax.random.split(rng)
    with jax.profiler.StepTraceAnnotation("generate", step=i):
      decode_state, sampled_tokens = engine.generate(params, decode_state, rng=rng_generate)

    # Automatically deactivate profiler after profiler_steps steps
    if i > config.max_prefill_predict_length + config.profiler_steps:
      prof.deactivate(blocking_object=sampled_tokens)
      prof_deactivated = True

    sampled_tokens_list.append(sampled_tokens)

  # Get results
  for i in range(_NUM_STREAMS):
    results = [t.get_result_at_slot(i).tokens.item() for t in sampled_tokens_list]
    output = tokenizer_model.decode(results)
    print(f"Input `{text}` -> `{output}`")

  assert output.startswith(
      config.autoregressive_decode_assert
  ), f"generated text mismatch {output=}, {config.autoregressive_decode_assert=}"

  # Deactivate profiler
  if not prof_deactivated:
    prof.deactivate(blocking_object=output)

  prof.post_process()
