// ProgressBar: the live bar on a terminal and the plain lines elsewhere, with an injected clock.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "scheduler/train/progress.h"

namespace mxlite {
namespace {

class ProgressTest : public ::testing::Test {
 protected:
  ProgressOptions Options() {
    ProgressOptions options;
    options.bar_width = 10;
    options.clock = [this] { return now_; };
    return options;
  }

  std::ostringstream out_;
  double now_ = 100;  // any origin
};

TEST_F(ProgressTest, TerminalRedrawsOneLineInPlace) {
  ProgressBar progress(out_, /*is_terminal=*/true, Options());
  EXPECT_TRUE(progress.is_terminal());
  progress.StartEpoch(1, 4);
  now_ = 101;
  progress.Update({.batches_done = 1, .samples_done = 1000, .loss = 2.5, .accuracy = 0.25});
  now_ = 101.05;  // within the refresh interval: not redrawn
  progress.Update({.batches_done = 2, .samples_done = 2000, .loss = 2.0, .accuracy = 0.3});
  now_ = 102;
  progress.Update({.batches_done = 3, .samples_done = 3000, .loss = 1.0, .accuracy = 0.5});
  now_ = 104;  // the last batch is always drawn
  progress.Update({.batches_done = 4, .samples_done = 4000, .loss = 0.5, .accuracy = 0.75});
  progress.EndEpoch("test accuracy 80.00%");
  EXPECT_EQ(out_.str(),
            "\repoch 1 [==>       ] 1/4 loss 2.5000 accuracy 25.00% 1000 images/s"
            "\repoch 1 [=======>  ] 3/4 loss 1.0000 accuracy 50.00% 1500 images/s"
            "\repoch 1 [==========] 4/4 loss 0.5000 accuracy 75.00% 1000 images/s\n"
            "epoch 1 done: 4 batches, loss 0.5000, accuracy 75.00%, 1000 images/s, 4.0 s; "
            "test accuracy 80.00%\n");
}

TEST_F(ProgressTest, TerminalBlanksWhatALongerLineLeft) {
  ProgressBar progress(out_, true, Options());
  progress.StartEpoch(2, 2);
  now_ = 101;
  progress.Update({.batches_done = 1, .samples_done = 12345, .loss = 123.25});
  now_ = 200;
  progress.Update({.batches_done = 2, .samples_done = 12346});
  const std::string first = "\repoch 2 [=====>    ] 1/2 loss 123.2500 12345 images/s";
  const std::string second = "\repoch 2 [==========] 2/2 123 images/s";
  EXPECT_EQ(out_.str(), first + second + std::string(first.size() - second.size(), ' '));
}

TEST_F(ProgressTest, PlainLinesEveryNBatchesThenTheSummary) {
  ProgressOptions options = Options();
  options.log_every_batches = 2;
  options.log_every_seconds = 0;
  ProgressBar progress(out_, /*is_terminal=*/false, options);
  EXPECT_FALSE(progress.is_terminal());
  progress.StartEpoch(3, 5);
  for (int batch = 1; batch <= 5; ++batch) {
    now_ += 1;
    progress.Update({.batches_done = batch,
                     .samples_done = 64 * batch,
                     .loss = 1.0 / batch,
                     .accuracy = 0.1 * batch});
  }
  progress.EndEpoch();
  EXPECT_EQ(out_.str(),
            "epoch 3 batch 2/5 loss 0.5000 accuracy 20.00% 64 images/s\n"
            "epoch 3 batch 4/5 loss 0.2500 accuracy 40.00% 64 images/s\n"
            "epoch 3 done: 5 batches, loss 0.2000, accuracy 50.00%, 64 images/s, 5.0 s\n");
  EXPECT_EQ(out_.str().find('\r'), std::string::npos);
}

TEST_F(ProgressTest, PlainLinesEveryFewSeconds) {
  ProgressOptions options = Options();
  options.log_every_batches = 0;
  options.log_every_seconds = 5;
  ProgressBar progress(out_, false, options);
  progress.StartEpoch(1, 100);
  for (int batch = 1; batch <= 12; ++batch) {
    now_ += 1;
    progress.Update({.batches_done = batch, .samples_done = 10 * batch});
  }
  EXPECT_EQ(out_.str(),
            "epoch 1 batch 5/100 10 images/s\n"
            "epoch 1 batch 10/100 10 images/s\n");
}

TEST_F(ProgressTest, SecondEpochStartsAfresh) {
  ProgressOptions options = Options();
  options.log_every_batches = 1;
  ProgressBar progress(out_, false, options);
  progress.StartEpoch(1, 1);
  now_ += 2;
  progress.Update({.batches_done = 1, .samples_done = 10});
  progress.EndEpoch();
  progress.StartEpoch(2, 1);
  now_ += 1;
  progress.Update({.batches_done = 1, .samples_done = 10});
  EXPECT_EQ(out_.str(),
            "epoch 1 batch 1/1 5 images/s\n"
            "epoch 1 done: 1 batches, 5 images/s, 2.0 s\n"
            "epoch 2 batch 1/1 10 images/s\n");
}

TEST_F(ProgressTest, DefaultWritesToStderrAsItsTerminalFlagSays) {
  ProgressBar progress;
  EXPECT_EQ(progress.is_terminal(), ProgressBar::StderrIsTerminal());
}

}  // namespace
}  // namespace mxlite
