# Trimmed from erfanzar/EasyDeL@eea36e732487:easydel/inference/vinference/vinference.py (Apache-2.0); see case.toml.
import asyncio
import os
import pathlib
import pickle
import time
import warnings
from datetime import datetime
from functools import partial
from typing import AsyncGenerator, Dict, List, Optional, Union, overload
from uuid import uuid4
import numpy as np
import flax.core
import jax
from fjformer import GenerateRNG, with_sharding_constraint
from fjformer.core import implicit_compact
from jax import lax
from jax import numpy as jnp
from jax import random as jrand
from jax.sharding import NamedSharding, PartitionSpec
from transformers import PreTrainedTokenizer

from easydel.etils.etils import get_logger
from easydel.inference.utils import (
	SampleState,
	inference_step_compiled,
	vInferenceConfig,
)
from easydel.inference.vinference.metrics import vInferenceMetrics
from easydel.modules.modeling_utils import EDPretrainedModel
from easydel.utils.compiling_utils import (
	smart_compile,
	load_compiled_fn,
	save_compiled_fn,
)
from pydantic import BaseModel

def measure_flops(func, *args, **kwargs):
	try:
		flops = func.cost_analysis()[0]["flops"]
	except:  # noqa
		flops = 1
	start_time = time.perf_counter()
	result = jax.block_until_ready(func(*args, **kwargs))
	end_time = time.perf_counter()
	elapsed_time = end_time - start_time
	return result, flops, flops / elapsed_time, elapsed_time
