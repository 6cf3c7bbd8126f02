#include "scheduler/train/metric.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"

namespace mxlite {

namespace {

struct Batch {
  std::vector<float> labels;
  std::vector<float> probabilities;
  int64_t classes = 0;
};

Batch Read(const std::string& metric, const NDArray& labels, const NDArray& predictions) {
  MX_CHECK(predictions.shape().ndim() == 2)
      << metric << ": predictions must be (batch, classes), got " << predictions.shape();
  MX_CHECK(labels.size() == predictions.shape()[0])
      << metric << ": " << labels.size() << " labels for " << predictions.shape()[0]
      << " predictions";
  Batch batch{labels.ToVector<float>(), predictions.ToVector<float>(), predictions.shape()[1]};
  for (float label : batch.labels) {
    MX_CHECK(label >= 0 && label < static_cast<float>(batch.classes) && label == std::floor(label))
        << metric << ": label " << label << " is not a class index in [0, " << batch.classes << ")";
  }
  return batch;
}

}  // namespace

void AccuracyMetric::Update(const NDArray& labels, const NDArray& predictions) {
  const Batch batch = Read("accuracy", labels, predictions);
  for (size_t i = 0; i < batch.labels.size(); ++i) {
    const float* row = batch.probabilities.data() + i * static_cast<size_t>(batch.classes);
    const int64_t predicted = std::max_element(row, row + batch.classes) - row;
    sum_ += predicted == static_cast<int64_t>(batch.labels[i]) ? 1.0 : 0.0;
    ++count_;
  }
}

void CrossEntropyMetric::Update(const NDArray& labels, const NDArray& predictions) {
  const Batch batch = Read("cross-entropy", labels, predictions);
  for (size_t i = 0; i < batch.labels.size(); ++i) {
    const float p = batch.probabilities[i * static_cast<size_t>(batch.classes) +
                                        static_cast<size_t>(batch.labels[i])];
    sum_ += -std::log(std::max(static_cast<double>(p), 1e-12));
    ++count_;
  }
}

}  // namespace mxlite
