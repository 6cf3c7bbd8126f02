// Evaluation metrics over batches of predictions (class probabilities, N x C) and labels (N class
// indices stored as floats): accuracy and cross-entropy, as MXNet's mx.metric. Update() waits for
// the arrays (it reads them on the host). Not thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "engine/ndarray.h"

namespace mxlite {

class Metric {
 public:
  virtual ~Metric() = default;
  virtual std::string name() const = 0;
  virtual void Update(const NDArray& labels, const NDArray& predictions) = 0;
  // Mean over everything seen since the last Reset (0 when nothing was seen).
  double Get() const { return count_ == 0 ? 0.0 : sum_ / static_cast<double>(count_); }
  int64_t count() const { return count_; }
  void Reset() { sum_ = 0, count_ = 0; }

 protected:
  double sum_ = 0;
  int64_t count_ = 0;
};

class AccuracyMetric : public Metric {
 public:
  std::string name() const override { return "accuracy"; }
  void Update(const NDArray& labels, const NDArray& predictions) override;
};

class CrossEntropyMetric : public Metric {
 public:
  std::string name() const override { return "cross-entropy"; }
  void Update(const NDArray& labels, const NDArray& predictions) override;
};

}  // namespace mxlite
