"""What the PyTorch baselines share: dtypes by cuda-pipe's names, CUDA-event timing of a step, one JSON line."""
import gzip
import json
import os
import shutil
import statistics

import torch

DTYPES = {'fp32': torch.float32, 'tf32': torch.float32, 'fp16': torch.float16, 'bf16': torch.bfloat16}


def set_matmul_precision(dtype_name):
    # 'highest' keeps fp32 matmuls in full fp32 (cuBLAS COMPUTE_32F); 'high' lets them use TF32, as cuda-pipe's tf32.
    torch.set_float32_matmul_precision('high' if dtype_name == 'tf32' else 'highest')


def pattern(shape, dtype, seed, device='cuda', pin=False):
    """Seeded values in [-1, 1): no baseline is timed on zeros."""
    generator = torch.Generator(device='cpu').manual_seed(seed)
    values = (torch.rand(shape, generator=generator) * 2 - 1).to(dtype)
    if device == 'cpu':
        return values.pin_memory() if pin else values
    return values.to(device)


def time_steps(step, first_stream, warmup, reps):
    """Each rep from an event on `first_stream` before `step()` to one after it (step joins its streams back)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for rep in range(warmup + reps):
        start.record(first_stream)
        step()
        end.record(first_stream)
        end.synchronize()
        if rep >= warmup:
            samples.append(start.elapsed_time(end))
    return samples


def fork(streams):
    """Every stream waits for the first, so a step's work starts after its start event."""
    for stream in streams[1:]:
        stream.wait_stream(streams[0])


def join(streams):
    """The first stream waits for every other, so the end event comes after all of a step's work."""
    for stream in streams[1:]:
        streams[0].wait_stream(stream)


def report(program, config, samples, **extra):
    print(json.dumps({
        'program': program, 'torch': torch.__version__, 'device': torch.cuda.get_device_name(0), **config,
        'medianMs': round(statistics.median(samples), 4), 'minMs': round(min(samples), 4), 'maxMs': round(max(samples), 4),
        **extra, 'samplesMs': [round(s, 4) for s in samples],
    }))


def gzip_trace(path):
    """The profiler's exported trace compressed beside itself (path + '.gz'), the uncompressed file removed."""
    with open(path, 'rb') as src, gzip.open(path + '.gz', 'wb') as dst:
        shutil.copyfileobj(src, dst)
    os.remove(path)
