#include "controller/center/file_read_worker.h"

#include <malloc.h>

#include <utility>

namespace portico::controller {

FileReadWorker::FileReadWorker(ReadFn read, DoneFn done)
    : read_(std::move(read)), done_(std::move(done)), thread_([this] { Run(); }) {}

FileReadWorker::~FileReadWorker() { Stop(); }

void FileReadWorker::Enqueue(const std::string& file) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  if (file == current_) {
    again_ = true;
    return;
  }
  if (queued_.insert(file).second) queue_.push_back(file);
  cv_.notify_one();
}

bool FileReadWorker::Holds(const std::string& file) const {
  std::lock_guard<std::mutex> lock(mu_);
  return file == current_ || queued_.count(file) != 0;
}

void FileReadWorker::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void FileReadWorker::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty() || again_; });
    if (stopping_) return;
    if (!again_) {
      current_ = std::move(queue_.front());
      queue_.pop_front();
      queued_.erase(current_);
    }
    again_ = false;
    const std::string file = current_;
    lock.unlock();
    FileDocuments read = read_(file);
    bool stopped;
    {
      std::lock_guard<std::mutex> check(mu_);
      stopped = stopping_;
    }
    if (!stopped) done_(file, std::move(read));
    // A large parse leaves freed arenas behind; give them back to the system.
    read = FileDocuments();
    ::malloc_trim(0);
    lock.lock();
    if (!again_) current_.clear();
  }
}

}  // namespace portico::controller
