#include "scheduler/train/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace mxlite {
namespace {

std::string Fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

}  // namespace

ProgressBar::ProgressBar(ProgressOptions options)
    : ProgressBar(std::cerr, StderrIsTerminal(), std::move(options)) {}

ProgressBar::ProgressBar(std::ostream& out, bool is_terminal, ProgressOptions options)
    : out_(out), is_terminal_(is_terminal), options_(std::move(options)) {}

bool ProgressBar::StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

double ProgressBar::Now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void ProgressBar::StartEpoch(int epoch, int64_t num_batches) {
  if (bar_open_) out_ << '\n';
  epoch_ = epoch;
  num_batches_ = num_batches;
  latest_ = ProgressStats{};
  epoch_start_ = Now();
  last_output_ = epoch_start_;
  last_bar_length_ = 0;
  drawn_batches_ = -1;
  bar_open_ = false;
}

double ProgressBar::ImagesPerSecond(double now) const {
  const double elapsed = now - epoch_start_;
  return elapsed > 0 ? static_cast<double>(latest_.samples_done) / elapsed : 0.0;
}

std::string ProgressBar::Figures(double now, const char* separator) const {
  std::string text;
  auto add = [&](const std::string& item) {
    if (!text.empty()) text += separator;
    text += item;
  };
  if (std::isfinite(latest_.loss)) add("loss " + Fixed(latest_.loss, 4));
  if (std::isfinite(latest_.accuracy)) add("accuracy " + Fixed(100 * latest_.accuracy, 2) + "%");
  add(Fixed(ImagesPerSecond(now), 0) + " images/s");
  return text;
}

void ProgressBar::Update(const ProgressStats& stats) {
  latest_ = stats;
  const double now = Now();
  const double since = now - last_output_;
  if (is_terminal_) {
    const bool last = stats.batches_done >= num_batches_;
    if (last || !bar_open_ || since >= options_.terminal_refresh_seconds) DrawBar(now);
    return;
  }
  const bool by_count =
      options_.log_every_batches > 0 && stats.batches_done % options_.log_every_batches == 0;
  const bool by_time = options_.log_every_seconds > 0 && since >= options_.log_every_seconds;
  if (by_count || by_time) WritePlainLine(now);
}

void ProgressBar::DrawBar(double now) {
  const int width = std::max(options_.bar_width, 1);
  const double fraction =
      num_batches_ > 0
          ? std::clamp(static_cast<double>(latest_.batches_done) / num_batches_, 0.0, 1.0)
          : 1.0;
  const int filled = static_cast<int>(fraction * width);
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < width) bar += '>';
  bar.resize(static_cast<size_t>(width), ' ');

  std::string line = "epoch " + std::to_string(epoch_) + " [" + bar + "] " +
                     std::to_string(latest_.batches_done) + "/" + std::to_string(num_batches_) +
                     " " + Figures(now, " ");
  const size_t length = line.size();
  if (length < last_bar_length_) line.append(last_bar_length_ - length, ' ');
  out_ << '\r' << line << std::flush;
  last_bar_length_ = length;
  drawn_batches_ = latest_.batches_done;
  last_output_ = now;
  bar_open_ = true;
}

void ProgressBar::WritePlainLine(double now) {
  out_ << "epoch " << epoch_ << " batch " << latest_.batches_done << "/" << num_batches_ << " "
       << Figures(now, " ") << '\n'
       << std::flush;
  last_output_ = now;
}

void ProgressBar::EndEpoch(const std::string& extra) {
  const double now = Now();
  if (is_terminal_) {
    if (!bar_open_ || drawn_batches_ != latest_.batches_done) DrawBar(now);
    out_ << '\n';
    bar_open_ = false;
  }
  out_ << "epoch " << epoch_ << " done: " << latest_.batches_done << " batches, "
       << Figures(now, ", ") << ", " << Fixed(now - epoch_start_, 1) << " s";
  if (!extra.empty()) out_ << "; " << extra;
  out_ << '\n' << std::flush;
}

}  // namespace mxlite
