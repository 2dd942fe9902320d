"""Runs llama.cpp's server (the xllamacpp package) on 127.0.0.1 until killed.

Usage: llama-server.py MODEL.gguf PORT CONTEXT THREADS
Started by scripts/eval-local; prints "listening on URL" once it answers.
"""
import signal
import sys
import time

import xllamacpp as xlc


def main():
    model, port, n_ctx, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    params = xlc.CommonParams()
    params.model.path = model
    params.n_ctx = n_ctx
    params.n_parallel = 1
    params.use_jinja = True
    params.hostname = "127.0.0.1"
    params.port = port
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.sampling.temp = 0.2
    params.warmup = False
    server = xlc.Server(params)
    print(f"listening on {server.listening_address}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
