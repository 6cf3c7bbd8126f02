// ProgressBar: per-epoch training progress with loss, accuracy and images/s.
//
//   ProgressBar progress;                          // stderr; a live bar when it is a terminal
//   progress.StartEpoch(epoch, train.num_batches());
//   ... after each batch: progress.Update({.batches_done = i + 1, .samples_done = seen,
//                                          .loss = loss.Get(), .accuracy = accuracy.Get()});
//   progress.EndEpoch("test accuracy 90.12%");
//
// On a terminal the bar is redrawn in place with '\r' (at most every terminal_refresh_seconds, and
// always for the last batch), e.g.
//   epoch 1 [=========>                    ] 312/938 loss 0.5123 accuracy 81.20% 1523 images/s
// and ends with a newline. Elsewhere (CI logs, files) plain lines are written instead, one every
// log_every_batches batches or log_every_seconds seconds, whichever comes first, e.g.
//   epoch 1 batch 100/938 loss 0.6123 accuracy 78.40% 1523 images/s
// Both modes end an epoch with a summary line:
//   epoch 1 done: 938 batches, loss 0.4123, accuracy 85.12%, 1523 images/s, 39.4 s; <extra>
// Loss and accuracy are shown when they are finite (NaN leaves them out). images/s counts
// samples_done since StartEpoch. The output stream, the terminal flag and the clock are
// injectable, so tests can check both modes without timing anything.
//
// Thread safety: none; one thread (the training loop) drives a ProgressBar.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <string>

namespace mxlite {

struct ProgressStats {
  int64_t batches_done = 0;  // in this epoch, 1 after the first batch
  int64_t samples_done = 0;  // in this epoch
  double loss = std::numeric_limits<double>::quiet_NaN();
  double accuracy = std::numeric_limits<double>::quiet_NaN();  // a fraction in [0, 1]
};

struct ProgressOptions {
  int bar_width = 30;
  double terminal_refresh_seconds = 0.1;
  int64_t log_every_batches = 100;  // plain mode; 0: never by count
  double log_every_seconds = 10;    // plain mode; 0: never by time
  // Seconds from any fixed origin; default: std::chrono::steady_clock.
  std::function<double()> clock = nullptr;
};

class ProgressBar {
 public:
  // Writes to std::cerr, as a live bar when stderr is a terminal.
  explicit ProgressBar(ProgressOptions options = {});
  // Writes to `out` (which must outlive this object), as a live bar when `is_terminal`.
  ProgressBar(std::ostream& out, bool is_terminal, ProgressOptions options = {});

  // Whether stderr is a terminal (isatty).
  static bool StderrIsTerminal();

  void StartEpoch(int epoch, int64_t num_batches);
  void Update(const ProgressStats& stats);
  // Finishes the bar and writes the summary line, followed by `extra` when given.
  void EndEpoch(const std::string& extra = "");

  bool is_terminal() const { return is_terminal_; }

 private:
  double Now() const;
  double ImagesPerSecond(double now) const;
  // "loss 0.5123 accuracy 81.20% 1523 images/s" from the latest stats; `separator` between items.
  std::string Figures(double now, const char* separator) const;
  void DrawBar(double now);
  void WritePlainLine(double now);

  std::ostream& out_;
  const bool is_terminal_;
  const ProgressOptions options_;

  int epoch_ = 0;
  int64_t num_batches_ = 0;
  ProgressStats latest_;
  double epoch_start_ = 0;
  double last_output_ = 0;
  size_t last_bar_length_ = 0;  // to blank out what a longer earlier bar left
  int64_t drawn_batches_ = -1;  // batches_done shown by the bar on screen
  bool bar_open_ = false;       // a bar line without its newline yet
};

}  // namespace mxlite
