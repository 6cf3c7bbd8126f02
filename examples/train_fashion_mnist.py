#!/usr/bin/python3
"""Trains the Fashion-MNIST convnet of train_fashion_mnist.cc from Python, through the C API.

    python3 examples/train_fashion_mnist.py [--epochs 1] [--batchnorm] [--gpu] [--max-batches N]

conv5x5 32 -> relu -> maxpool -> conv5x5 64 -> relu -> maxpool -> fc 1024 -> relu -> fc 10,
SGD with momentum 0.9, learning rate 0.01, batch 64, Xavier initialisation (seed 1), as in C++
(only the shuffling differs: NumPy's generator draws the order).
The data (Debian's dataset-fashion-mnist) is read with NumPy; mxlite does the rest. Needs NumPy
and libmxlite.so (MXNET_LIBRARY_PATH, or build/ of this source tree). Output of --epochs 2 on
the 2-core development machine:
    Total parameters: 3,274,634
    ...
    epoch 1 batch 100/938: loss 1.1914, accuracy 58.03%
    ...
    epoch 1: loss 0.5384, accuracy 80.52%, 626 images/s; test accuracy 86.20%
    ...
    epoch 2: loss 0.3309, accuracy 88.02%, 665 images/s; test accuracy 88.69%
"""

import argparse
import gzip
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python_stub"))
import mxlite  # noqa: E402  (after the path to the package in this source tree)


def read_idx(path, ndim):
    """An IDX ubyte file (plain or gzip) as a uint8 array, its header checked."""
    with open(path, "rb") as raw:
        data = raw.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    magic = int.from_bytes(data[:4], "big")
    if magic != 0x800 + ndim:
        sys.exit("%s: not an idx%d ubyte file (magic %#x)" % (path, ndim, magic))
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != np.prod(dims):
        sys.exit("%s: holds %d bytes, its header says %s" % (path, body.size, dims))
    return body.reshape(dims)


def load_split(folder, split):
    images = read_idx(os.path.join(folder, split + "-images-idx3-ubyte.gz"), 3)
    labels = read_idx(os.path.join(folder, split + "-labels-idx1-ubyte.gz"), 1)
    return (images[:, None] / np.float32(255)).astype(np.float32), labels.astype(np.float32)


def batches(order, batch_size):
    """Index batches over `order`; the last one is padded from the start, as MXNet's "pad" does.
    Yields (indices, number of padding samples)."""
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        pad = batch_size - len(chunk)
        yield (np.concatenate([chunk, order[:pad]]) if pad else chunk), pad


def build_network(batch_size, batchnorm):
    g = mxlite.GraphBuilder()
    x = g.input("data", (batch_size, 1, 28, 28))
    for filters in (32, 64):
        x = g.conv(x, num_filter=filters, kernel=(5, 5), pad=(2, 2))
        if batchnorm:
            x = g.batch_norm(x)
        x = g.max_pool(g.relu(x), kernel=(2, 2), stride=(2, 2))
    x = g.relu(g.fully_connected(g.flatten(x), num_hidden=1024))
    x = g.fully_connected(x, num_hidden=10)
    return g.build([g.softmax_output(x, g.input("softmax_label", (batch_size,)))])


def evaluate(executor, images, labels, batch_size):
    correct = 0
    for indices, pad in batches(np.arange(len(labels)), batch_size):
        (probabilities,) = executor.forward(data=images[indices])
        real = batch_size - pad
        correct += int((probabilities[:real].argmax(1) == labels[indices[:real]]).sum())
    return correct / len(labels)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--batchnorm", action="store_true")
    parser.add_argument("--gpu", action="store_true")
    parser.add_argument("--max-batches", type=int, default=0, help="per epoch; 0: all")
    parser.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    args = parser.parse_args()

    context = "gpu(0)" if args.gpu else "cpu"
    train_images, train_labels = load_split(args.data_dir, "train")
    test_images, test_labels = load_split(args.data_dir, "t10k")
    graph = build_network(args.batch_size, args.batchnorm)
    executor = graph.bind(context, training=True)
    print(executor.summary(), end="", flush=True)
    executor.initialize("xavier", seed=1)
    shared = {name: executor.arg(name)
              for name in executor.parameter_names + executor.auxiliary_names}
    evaluator = graph.bind(context, arrays=shared)
    sgd = mxlite.SGD(learning_rate=args.lr, momentum=0.9, rescale_grad=1 / args.batch_size)

    rng = np.random.default_rng(7)
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(len(train_labels))
        total = (len(order) + args.batch_size - 1) // args.batch_size
        if args.max_batches:
            total = min(total, args.max_batches)
        loss_sum = correct = seen = 0
        start = time.monotonic()
        for number, (indices, _) in enumerate(batches(order, args.batch_size), 1):
            if number > total:
                break
            labels = train_labels[indices]
            (probabilities,) = executor.forward(is_train=True, data=train_images[indices],
                                                softmax_label=labels)
            executor.backward()
            sgd.step(executor)
            picked = probabilities[np.arange(len(labels)), labels.astype(int)]
            loss_sum += float(-np.log(np.maximum(picked, 1e-12)).sum())
            correct += int((probabilities.argmax(1) == labels).sum())
            seen += len(labels)
            if number % 100 == 0:
                print("epoch %d batch %d/%d: loss %.4f, accuracy %.2f%%"
                      % (epoch, number, total, loss_sum / seen, 100 * correct / seen), flush=True)
        speed = seen / (time.monotonic() - start)
        accuracy = evaluate(evaluator, test_images, test_labels, args.batch_size)
        print("epoch %d: loss %.4f, accuracy %.2f%%, %.0f images/s; test accuracy %.2f%%"
              % (epoch, loss_sum / seen, 100 * correct / seen, speed, 100 * accuracy), flush=True)


if __name__ == "__main__":
    try:
        main()
    except mxlite.MXLiteError as error:
        sys.exit("train_fashion_mnist.py: %s" % error)
