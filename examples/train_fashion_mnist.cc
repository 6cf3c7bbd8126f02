// Trains a convnet on Fashion-MNIST (Debian's dataset-fashion-mnist) and reports test accuracy.
//
//   build/bin/train_fashion_mnist [--epochs 5] [--batchnorm] [--gpu] [--checkpoint model.mxckpt]
//                                 [--threads N] [--max-batches N]   (the last two for benchmarks)
//                                 [--kvstore local|dist_sync|dist_sync_device]
//   mpirun -np 2 build/bin/train_fashion_mnist --kvstore dist_sync    (data parallel, 2 ranks)
//   mpirun -np 2 build/bin/train_fashion_mnist --gpu --kvstore dist_sync_device  (NCCL, 2 GPUs)
//
// conv5x5 32 -> relu -> maxpool -> conv5x5 64 -> relu -> maxpool -> fc 1024 -> relu -> fc 10,
// SGD with momentum 0.9, learning rate 0.01, batch 64. With dist_sync each rank trains on its shard
// of the training set with batch 64 / ranks; gradients are summed over the ranks, so the recipe is
// the one-process one; rank 0 prints and writes the checkpoint. Expected output (one epoch, CPU):
//   Layer (type)                        Output shape            Params
//   ...
//   Total parameters: 3,274,634
//   epoch 1 done: 938 batches, loss 0.5364, accuracy 80.77%, 665 images/s, 90.2 s; test accuracy 86.25%
//   epoch 1: test accuracy 86.25%
#include <cstdio>
#include <iostream>
#include <string>

#include "core/build_info.h"
#include "core/error.h"
#include "core/settings.h"
#include "scheduler/graph/executor.h"
#include "scheduler/kvstore/kvstore.h"
#include "scheduler/train/checkpoint.h"
#include "scheduler/train/idx_iterator.h"
#include "scheduler/train/initializer.h"
#include "scheduler/train/metric.h"
#include "scheduler/train/model_zoo.h"
#include "scheduler/train/optimizer.h"
#include "scheduler/train/progress.h"

using namespace mxlite;

struct Options {
  int epochs = 5;
  int batch_size = 64;
  double learning_rate = 0.01;
  bool batchnorm = false;
  bool gpu = false;
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  std::string checkpoint = "fashion_mnist.mxckpt";
  int threads = 0;        // intra-op threads; 0: MXNET_OMP_MAX_THREADS
  int64_t max_batches = 0;  // stop each epoch after this many batches; 0: the whole epoch
  std::string kvstore;      // empty: the optimiser updates the executor directly
};

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      MX_CHECK(i + 1 < argc) << arg << " needs a value";
      return argv[++i];
    };
    if (arg == "--epochs") options.epochs = std::stoi(value());
    else if (arg == "--batch-size") options.batch_size = std::stoi(value());
    else if (arg == "--lr") options.learning_rate = std::stod(value());
    else if (arg == "--batchnorm") options.batchnorm = true;
    else if (arg == "--gpu") options.gpu = true;
    else if (arg == "--data-dir") options.data_dir = value();
    else if (arg == "--checkpoint") options.checkpoint = value();
    else if (arg == "--threads") options.threads = std::stoi(value());
    else if (arg == "--max-batches") options.max_batches = std::stoll(value());
    else if (arg == "--kvstore") options.kvstore = value();
    else MX_THROW() << "unknown flag " << arg << " (see the comment at the top of this example)";
  }
  return options;
}

// `part` of `parts` of the split (each rank trains on its own shard), batches of `batch_size`.
IdxIterator OpenSplit(const Options& options, const std::string& split, bool shuffle,
                      int batch_size, int part = 0, int parts = 1) {
  return IdxIterator({.image_path = options.data_dir + "/" + split + "-images-idx3-ubyte.gz",
                      .label_path = options.data_dir + "/" + split + "-labels-idx1-ubyte.gz",
                      .batch_size = batch_size,
                      .shuffle = shuffle,
                      .seed = 7,
                      .part_index = part,
                      .num_parts = parts});
}

// Accuracy of the current parameters on the test split (padding samples not counted).
double Evaluate(Executor& exec, IdxIterator& test) {
  AccuracyMetric accuracy;
  DataBatch batch;
  test.Reset();
  while (test.Next(&batch)) {
    CopyFromTo(batch.data, exec.Arg("data"));
    exec.Forward(false);
    const int64_t real = batch.label.shape()[0] - batch.pad;
    accuracy.Update(batch.label.Slice(0, real), exec.outputs()[0].Slice(0, real));
  }
  return accuracy.Get();
}

int main(int argc, char** argv) try {
  const Options options = ParseOptions(argc, argv);
  if (options.threads > 0) settings().Set("MXNET_OMP_MAX_THREADS", std::to_string(options.threads));
  MX_CHECK(!options.gpu || VisibleGpuCount() > 0) << "--gpu given but no GPU is visible";
  std::unique_ptr<KVStore> kv;
  if (!options.kvstore.empty()) kv = KVStore::Create(options.kvstore);
  // dist_sync_device gives each rank its own GPU; the executors train there.
  const Context ctx = !options.gpu                   ? Context::CPU()
                      : kv && kv->context().is_gpu() ? kv->context()
                                                     : Context::GPU(0);
  const int rank = kv ? kv->rank() : 0, ranks = kv ? kv->num_workers() : 1;
  MX_CHECK(options.batch_size % ranks == 0)
      << "--batch-size " << options.batch_size << " is not a multiple of the " << ranks
      << " ranks";
  const int local_batch = options.batch_size / ranks;
  IdxIterator train = OpenSplit(options, "train", true, local_batch, rank, ranks);
  IdxIterator test = OpenSplit(options, "t10k", false, options.batch_size);

  auto exec = Executor::Bind(FashionMnistNet(local_batch, options.batchnorm),
                             {.ctx = ctx, .training = true});
  auto eval_graph = FashionMnistNet(options.batch_size, options.batchnorm);
  if (rank == 0) std::cout << exec->Summary() << std::flush;
  InitializeParameters(*exec, Xavier{}, /*seed=*/1);
  BindOptions eval_options{.ctx = ctx};
  for (const std::string& name : exec->ParameterNames()) eval_options.arrays[name] = exec->Arg(name);
  for (const std::string& name : exec->AuxiliaryNames()) eval_options.arrays[name] = exec->Arg(name);
  auto eval = Executor::Bind(eval_graph, eval_options);

  auto sgd = Optimizer::Sgd({.learning_rate = options.learning_rate, .momentum = 0.9,
                             .rescale_grad = 1.0 / options.batch_size});
  const std::vector<std::string> names = exec->ParameterNames();
  const std::vector<std::string> push_order(names.rbegin(), names.rend());  // backward's order
  std::vector<NDArray> weights, gradients;
  for (const std::string& name : names) weights.push_back(exec->Arg(name));
  for (const std::string& name : push_order) gradients.push_back(exec->Gradient(name));
  if (kv) {
    kv->Init(names, weights);  // rank 0's initial weights everywhere
    kv->SetOptimizer(std::move(sgd));
    kv->Pull(names, weights);
  }
  Optimizer& optimizer = kv ? *kv->optimizer() : *sgd;
  ProgressBar progress;
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    AccuracyMetric accuracy;
    CrossEntropyMetric loss;
    train.Reset();
    if (rank == 0) progress.StartEpoch(epoch, train.num_batches());
    DataBatch batch;
    int64_t batches = 0;
    while ((options.max_batches == 0 || batches < options.max_batches) && train.Next(&batch)) {
      CopyFromTo(batch.data, exec->Arg("data"));
      CopyFromTo(batch.label, exec->Arg("softmax_label"));
      exec->Forward(true);
      exec->Backward();
      if (kv) {
        kv->Push(push_order, gradients, /*priority=*/1);  // > 0: ahead of queued backward ops
        kv->Pull(names, weights);
      } else {
        optimizer.UpdateAll(*exec);
      }
      accuracy.Update(batch.label, exec->outputs()[0]);
      loss.Update(batch.label, exec->outputs()[0]);
      ++batches;
      if (rank == 0) {
        progress.Update({batches, batches * options.batch_size, loss.Get(), accuracy.Get()});
      }
    }
    const double test_accuracy = Evaluate(*eval, test);
    char line[64];
    std::snprintf(line, sizeof(line), "test accuracy %.2f%%", 100 * test_accuracy);
    if (rank != 0) continue;
    progress.EndEpoch(line);
    std::printf("epoch %d: test accuracy %.2f%%\n", epoch, 100 * test_accuracy);
    std::fflush(stdout);
  }
  Checkpoint checkpoint;
  for (const std::string& name : exec->ParameterNames()) checkpoint.arrays[name] = exec->Arg(name);
  for (const std::string& name : exec->AuxiliaryNames()) checkpoint.arrays[name] = exec->Arg(name);
  checkpoint.optimizer_states = optimizer.States();
  checkpoint.metadata["epochs"] = std::to_string(options.epochs);
  if (kv) {
    kv->SaveCheckpoint(options.checkpoint, checkpoint);  // written by rank 0
  } else {
    SaveCheckpoint(options.checkpoint, checkpoint);
  }
  if (rank == 0) std::printf("saved %s\n", options.checkpoint.c_str());
  return 0;
} catch (const mxlite::Error& error) {
  std::fprintf(stderr, "train_fashion_mnist: %s\n", error.what());
  return 1;
}
