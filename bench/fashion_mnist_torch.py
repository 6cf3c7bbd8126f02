#!/usr/bin/env python3
"""PyTorch peer of examples/train_fashion_mnist.cc: the same network, recipe and batch size.

Prints one line: "pytorch threads=N batches=B images/s=X seconds=S". Run with Debian's
/usr/bin/python3 (python3-torch). bench/compare_training.sh runs it beside mxlite.
"""
import argparse
import gzip
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 5, padding=2)
        self.conv2 = nn.Conv2d(32, 64, 5, padding=2)
        self.fc1 = nn.Linear(64 * 7 * 7, 1024)
        self.fc2 = nn.Linear(1024, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc2(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (cuDNN autotuning on)")
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    images = read_idx(f"{args.data_dir}/train-images-idx3-ubyte.gz").astype(np.float32) / 255.0
    labels = read_idx(f"{args.data_dir}/train-labels-idx1-ubyte.gz").astype(np.int64)
    # The whole training set sits on the device, as mxlite's iterator copies each batch there.
    images = torch.from_numpy(images).unsqueeze(1).to(device)
    labels = torch.from_numpy(labels).to(device)
    order = torch.randperm(len(labels)).to(device)
    model = Net().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    warmup = 10
    start = None
    for b in range(args.batches + warmup):
        if b == warmup:
            start = time.perf_counter()
        index = order[(b * args.batch_size) % len(labels):][: args.batch_size]
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images[index]), labels[index])
        loss.backward()
        optimizer.step()
        if b == warmup - 1 and device.type == "cuda":
            torch.cuda.synchronize()
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    print(f"pytorch device={args.device} threads={args.threads} batches={args.batches} "
          f"images/s={args.batches * args.batch_size / seconds:.1f} seconds={seconds:.2f}")


if __name__ == "__main__":
    main()
