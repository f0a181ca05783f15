#include "disk_model.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

namespace gpuolap::power_loss {

namespace fs = std::filesystem;

namespace {

std::string parent_of(const std::string& relative) { return fs::path(relative).parent_path().string(); }

bool under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

void apply_data(std::string& s, bool truncate, uint64_t offset, const std::string& bytes) {
  if (truncate) {
    s.resize(offset, '\0');
    return;
  }
  if (s.size() < offset + bytes.size()) s.resize(offset + bytes.size(), '\0');
  s.replace(offset, bytes.size(), bytes);
}

}  // namespace

std::vector<Event> read_trace(const fs::path& trace) {
  std::ifstream in(trace, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open the trace", trace.string()));
  std::vector<Event> events;
  EventHeader h{};
  while (in.read(reinterpret_cast<char*>(&h), sizeof h)) {
    Event e;
    e.kind = h.kind;
    e.fd = h.fd;
    e.offset = h.offset;
    e.flags = h.flags;
    e.path.resize(h.path_bytes);
    e.path2.resize(h.path2_bytes);
    e.data.resize(h.data_bytes);
    in.read(e.path.data(), h.path_bytes);
    in.read(e.path2.data(), h.path2_bytes);
    in.read(e.data.data(), static_cast<std::streamsize>(h.data_bytes));
    if (!in) throw std::runtime_error(fmt::format("{}: event {} is truncated", trace.string(), events.size() + 1));
    events.push_back(std::move(e));
  }
  if (in.gcount() != 0) throw std::runtime_error(fmt::format("{}: a torn event at its end", trace.string()));
  return events;
}

DiskModel::DiskModel(std::string root, const Tree& initial) : root_(std::move(root)) {
  new_inode(true);  // inode 0: the root, durable and never renamed
  for (const auto& [path, entry] : initial) {
    const int inode = new_inode(entry.directory);
    inodes_[inode].durable = inodes_[inode].current = entry.contents;
    names_[path] = durable_base_[path] = inode;
  }
}

std::string DiskModel::relative(const std::string& absolute) const {
  if (absolute == root_) return "";
  if (!under(absolute, root_)) throw std::runtime_error(fmt::format("{} is outside {}", absolute, root_));
  return absolute.substr(root_.size() + 1);
}

int DiskModel::new_inode(bool directory) {
  inodes_.push_back(Inode{directory, {}, {}, {}});
  return static_cast<int>(inodes_.size() - 1);
}

bool DiskModel::changes_disk(const Event& e) {
  switch (e.kind) {
    case EventKind::open:
      return (e.flags & (O_CREAT | O_TRUNC)) != 0;
    case EventKind::close:
    case EventKind::mark:
      return false;
    default:
      return true;
  }
}

void DiskModel::apply_name_op(Names& names, const NameOp& op) {
  auto erase_tree = [&](const std::string& path) {
    names.erase(path);
    for (auto it = names.lower_bound(path + "/"); it != names.end() && under(it->first, path);) it = names.erase(it);
  };
  switch (op.kind) {
    case NameKind::add:
      names[op.path] = op.inode;
      break;
    case NameKind::remove:
      erase_tree(op.path);
      break;
    case NameKind::rename: {
      // In a cut that left out the operation creating the source, there is nothing to rename.
      if (!names.count(op.path)) break;
      Names moved;
      for (auto it = names.lower_bound(op.path); it != names.end() && (it->first == op.path || under(it->first, op.path));
           ++it)
        moved[op.path2 + it->first.substr(op.path.size())] = it->second;
      erase_tree(op.path);
      erase_tree(op.path2);
      names.insert(moved.begin(), moved.end());
      break;
    }
  }
}

void DiskModel::add_name_op(NameOp op) {
  apply_name_op(names_, op);
  pending_.push_back(std::move(op));
}

void DiskModel::sync_directory(const std::string& dir) {
  for (NameOp& op : pending_) {
    if (parent_of(op.path) == dir) op.from_synced = true;
    if (parent_of(op.kind == NameKind::rename ? op.path2 : op.path) == dir) op.to_synced = true;
  }
  fold_durable_prefix();
}

void DiskModel::fold_durable_prefix() {
  while (!pending_.empty() && pending_.front().durable()) {
    apply_name_op(durable_base_, pending_.front());
    pending_.pop_front();
  }
}

void DiskModel::apply(const Event& e) {
  auto file_of = [&](int fd) -> OpenFile& {
    auto it = open_.find(fd);
    if (it == open_.end()) throw std::runtime_error(fmt::format("descriptor {} was never opened in the trace", fd));
    return it->second;
  };
  auto existing = [&](const std::string& rel) {
    auto it = names_.find(rel);
    if (it == names_.end())
      throw std::runtime_error(fmt::format("{}/{} is used but the trace never created it", root_, rel));
    return it->second;
  };
  switch (e.kind) {
    case EventKind::open: {
      const std::string rel = relative(e.path);
      int inode = 0;
      if (!rel.empty()) {
        if ((e.flags & O_CREAT) && !names_.count(rel)) {
          inode = new_inode(false);
          add_name_op(NameOp{NameKind::add, rel, "", inode});
        } else {
          inode = existing(rel);
          if ((e.flags & O_TRUNC) && !inodes_[inode].directory) {
            inodes_[inode].current.clear();
            inodes_[inode].unsynced.push_back(DataOp{true, 0, {}});
          }
        }
      }
      open_[e.fd] = OpenFile{inode, rel};
      break;
    }
    case EventKind::close:
      open_.erase(e.fd);
      break;
    case EventKind::write: {
      Inode& inode = inodes_[file_of(e.fd).inode];
      const uint64_t offset = e.offset < 0 ? inode.current.size() : static_cast<uint64_t>(e.offset);
      apply_data(inode.current, false, offset, e.data);
      inode.unsynced.push_back(DataOp{false, offset, e.data});
      break;
    }
    case EventKind::truncate: {
      Inode& inode = inodes_[file_of(e.fd).inode];
      apply_data(inode.current, true, static_cast<uint64_t>(e.offset), "");
      inode.unsynced.push_back(DataOp{true, static_cast<uint64_t>(e.offset), {}});
      break;
    }
    case EventKind::fsync:
    case EventKind::fdatasync: {
      const OpenFile& file = file_of(e.fd);
      Inode& inode = inodes_[file.inode];
      if (inode.directory) {
        sync_directory(file.path);
      } else {
        inode.durable = inode.current;
        inode.unsynced.clear();
      }
      break;
    }
    case EventKind::rename:
      existing(relative(e.path));
      add_name_op(NameOp{NameKind::rename, relative(e.path), relative(e.path2)});
      break;
    case EventKind::unlink:
    case EventKind::rmdir:
      existing(relative(e.path));
      add_name_op(NameOp{NameKind::remove, relative(e.path), ""});
      break;
    case EventKind::mkdir:
      add_name_op(NameOp{NameKind::add, relative(e.path), "", new_inode(true)});
      break;
    case EventKind::link:
      add_name_op(NameOp{NameKind::add, relative(e.path2), "", existing(relative(e.path))});
      break;
    case EventKind::sync_all:
      for (Inode& inode : inodes_) {
        inode.durable = inode.current;
        inode.unsynced.clear();
      }
      for (NameOp& op : pending_) op.from_synced = op.to_synced = true;
      fold_durable_prefix();
      break;
    case EventKind::mark:
      break;
    default:
      throw std::runtime_error(fmt::format("unknown event kind {}", static_cast<uint32_t>(e.kind)));
  }
}

std::string DiskModel::contents(const Inode& inode, DataView view) const {
  switch (view) {
    case DataView::durable:
      return inode.durable;
    case DataView::current:
      return inode.current;
    case DataView::torn:
    case DataView::zeros:
    case DataView::reordered:
      break;
  }
  size_t first_write = inode.unsynced.size(), last_write = inode.unsynced.size();
  for (size_t i = 0; i < inode.unsynced.size(); ++i) {
    if (inode.unsynced[i].truncate) continue;
    if (first_write == inode.unsynced.size()) first_write = i;
    last_write = i;
  }
  std::string s = inode.durable;
  for (size_t i = 0; i < inode.unsynced.size(); ++i) {
    const DataOp& op = inode.unsynced[i];
    if (op.truncate)
      apply_data(s, true, op.offset, "");
    else if (view == DataView::zeros || (view == DataView::reordered && i == first_write))
      apply_data(s, false, op.offset, std::string(op.bytes.size(), '\0'));
    else if (view == DataView::torn && i == last_write)
      apply_data(s, false, op.offset, op.bytes.substr(0, op.bytes.size() / 2));
    else
      apply_data(s, false, op.offset, op.bytes);
  }
  return s;
}

Tree DiskModel::tree(const Names& names, DataView view) const {
  Tree t;
  for (const auto& [path, inode] : names) {
    // A name is reachable only through directories that are there too.
    bool reachable = true;
    for (std::string up = parent_of(path); reachable && !up.empty(); up = parent_of(up)) {
      auto it = names.find(up);
      reachable = it != names.end() && inodes_[it->second].directory;
    }
    if (!reachable) continue;
    const Inode& node = inodes_[inode];
    t[path] = Entry{node.directory, node.directory ? "" : contents(node, view)};
  }
  return t;
}

Tree DiskModel::current() const { return tree(names_, DataView::current); }

std::vector<CrashState> DiskModel::crash_states() const {
  size_t undurable = 0;
  for (const NameOp& op : pending_) undurable += !op.durable();
  std::vector<CrashState> states;
  auto add = [&](std::string name, Tree t) {
    for (const CrashState& s : states)
      if (s.tree == t) return;
    states.push_back(CrashState{std::move(name), std::move(t)});
  };
  for (size_t p = 0; p <= undurable; ++p) {
    Names names = durable_base_;
    size_t taken = 0;
    for (const NameOp& op : pending_) {
      if (!op.durable() && taken++ >= p) continue;
      apply_name_op(names, op);
    }
    const std::string kept = fmt::format("{} of {} unsynced name changes kept", p, undurable);
    add(kept + ", unsynced data lost", tree(names, DataView::durable));
    add(kept + ", unsynced data kept", tree(names, DataView::current));
    if (p == 0 || p == undurable) {
      add(kept + ", the last unsynced write of each file torn", tree(names, DataView::torn));
      add(kept + ", unsynced writes reached the disk as zeros", tree(names, DataView::zeros));
      add(kept + ", unsynced writes reached the disk out of order (the first of each file not)",
          tree(names, DataView::reordered));
    }
  }
  return states;
}

}  // namespace gpuolap::power_loss
