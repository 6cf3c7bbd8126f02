"""Training through the stub: logistic regression with SGD and a small MLP with Adam on synthetic
data; the loss must go down."""

import numpy as np


def two_blobs(rng, count):
    labels = rng.integers(0, 2, count)
    points = rng.standard_normal((count, 2)) + np.where(labels[:, None] == 1, 1.5, -1.5)
    return points.astype(np.float32), labels.astype(np.float32)


def cross_entropy(probabilities, labels):
    picked = probabilities[np.arange(len(labels)), labels.astype(int)]
    return float(-np.log(np.maximum(picked, 1e-12)).mean())


def train(mxlite, graph, optimizer, data, labels, steps):
    executor = graph.bind("cpu", training=True)
    executor.initialize("xavier", seed=1)
    losses = []
    for _ in range(steps):
        (probabilities,) = executor.forward(is_train=True, data=data, softmax_label=labels)
        losses.append(cross_entropy(probabilities, labels))
        executor.backward()
        optimizer.step(executor)
    return losses


def test_logistic_regression_with_sgd(mxlite):
    data, labels = two_blobs(np.random.default_rng(0), 128)
    g = mxlite.GraphBuilder()
    logits = g.fully_connected(g.input("data", data.shape), num_hidden=2)
    graph = g.build([g.softmax_output(logits, g.input("softmax_label", labels.shape))])
    sgd = mxlite.SGD(learning_rate=0.5, momentum=0.9, rescale_grad=1 / len(labels))
    losses = train(mxlite, graph, sgd, data, labels, 30)
    assert losses[-1] < 0.5 * losses[0], losses
    assert losses[-1] < 0.15, losses


def test_small_mlp_with_adam_learns_xor(mxlite):
    rng = np.random.default_rng(1)
    data = rng.uniform(-1, 1, (256, 2)).astype(np.float32)
    labels = ((data[:, 0] > 0) != (data[:, 1] > 0)).astype(np.float32)  # not linearly separable
    g = mxlite.GraphBuilder()
    h = g.tanh(g.fully_connected(g.input("data", data.shape), num_hidden=16))
    logits = g.fully_connected(h, num_hidden=2)
    graph = g.build([g.softmax_output(logits, g.input("softmax_label", labels.shape))])
    adam = mxlite.Adam(learning_rate=0.05, rescale_grad=1 / len(labels))
    assert abs(adam.learning_rate - 0.05) < 1e-12
    losses = train(mxlite, graph, adam, data, labels, 60)
    assert losses[-1] < 0.5 * losses[0], losses


def test_optimizer_update_of_one_array(mxlite):
    weight = mxlite.array(np.array([1.0, 2.0], dtype=np.float32))
    gradient = mxlite.array(np.array([0.5, -1.0], dtype=np.float32))
    sgd = mxlite.SGD(learning_rate=0.1)
    sgd.update("w", weight, gradient)
    np.testing.assert_allclose(weight.asnumpy(), [0.95, 2.1], rtol=1e-6)
    sgd.learning_rate = 1.0
    sgd.update("w", weight, gradient)
    np.testing.assert_allclose(weight.asnumpy(), [0.45, 3.1], rtol=1e-6)


def test_mlp_with_layer_norm_and_gelu_learns_xor(mxlite):
    rng = np.random.default_rng(2)
    data = rng.uniform(-1, 1, (256, 2)).astype(np.float32)
    labels = ((data[:, 0] > 0) != (data[:, 1] > 0)).astype(np.float32)
    g = mxlite.GraphBuilder()
    h = g.fully_connected(g.input("data", data.shape), num_hidden=16)
    h = g.gelu(g.layer_norm(h, axis=-1, eps=1e-5))
    logits = g.fully_connected(g.silu(h), num_hidden=2)
    graph = g.build([g.softmax_output(logits, g.input("softmax_label", labels.shape))])
    adam = mxlite.Adam(learning_rate=0.05, rescale_grad=1 / len(labels))
    losses = train(mxlite, graph, adam, data, labels, 60)
    assert losses[-1] < 0.5 * losses[0], losses


def test_convolution_with_group_norm_learns_a_bright_corner(mxlite):
    # Which quadrant of an 8x8 image is brighter: a convolution, GroupNorm (2 groups of 4
    # channels), ReLU, global pooling and a classifier learn it.
    rng = np.random.default_rng(4)
    images = rng.uniform(0, 1, (64, 1, 8, 8)).astype(np.float32)
    labels = rng.integers(0, 4, 64).astype(np.float32)
    for image, label in zip(images, labels):
        row, column = divmod(int(label), 2)
        image[0, 4 * row:4 * row + 4, 4 * column:4 * column + 4] += 1.0
    g = mxlite.GraphBuilder()
    h = g.conv(g.input("data", images.shape), num_filter=8, kernel=(3, 3), pad=(1, 1))
    h = g.relu(g.group_norm(h, num_groups=2))
    h = g.conv(h, num_filter=4, kernel=(4, 4), stride=(4, 4))
    logits = g.flatten(g.global_avg_pool(h))
    graph = g.build([g.softmax_output(logits, g.input("softmax_label", labels.shape))])
    adam = mxlite.Adam(learning_rate=0.05, rescale_grad=1 / len(labels))
    losses = train(mxlite, graph, adam, images, labels, 60)
    assert losses[-1] < 0.5 * losses[0], losses


def test_mlp_with_hard_swish_learns_xor(mxlite):
    rng = np.random.default_rng(3)
    data = rng.uniform(-1, 1, (256, 2)).astype(np.float32)
    labels = ((data[:, 0] > 0) != (data[:, 1] > 0)).astype(np.float32)
    g = mxlite.GraphBuilder()
    h = g.hard_swish(g.fully_connected(g.input("data", data.shape), num_hidden=16))
    logits = g.fully_connected(h, num_hidden=2)
    graph = g.build([g.softmax_output(logits, g.input("softmax_label", labels.shape))])
    adam = mxlite.Adam(learning_rate=0.05, rescale_grad=1 / len(labels))
    losses = train(mxlite, graph, adam, data, labels, 60)
    assert losses[-1] < 0.5 * losses[0], losses
