#include "Pt2Archive.h"
#include "graphlint/pt2/Pt2Importer.h"
#include "graphlint/ir/MessageText.h"

#include <llvm/Support/Path.h>

#include <fmt/format.h>

#include <unistd.h>
#include <zip.h>

namespace graphlint::pt2 {
namespace {

constexpr zip_int64_t kMaxEntries = 1 << 20;  // a real archive has one per tensor
constexpr uint64_t kMaxJsonBytes = 256ull << 20;   // models/*.json, uncompressed
constexpr uint64_t kMaxConfigBytes = 64ull << 20;  // data/weights/model_weights_config.json
constexpr uint64_t kMaxNamesBytes = 1ull << 20;    // extra/graphlint_symbols.json

std::string zipMessage(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string s = zip_error_strerror(&e);
  zip_error_fini(&e);
  return s;
}

}  // namespace

struct Pt2Archive::Handle {
  zip_t *zip = nullptr;
  ~Handle() {
    if (zip)
      zip_discard(zip);  // read-only: nothing to write back
  }
};

Pt2Archive::Pt2Archive(std::unique_ptr<Handle> h, std::vector<std::string> names)
    : h_(std::move(h)), names_(std::move(names)) {}
Pt2Archive::Pt2Archive(Pt2Archive &&) noexcept = default;
Pt2Archive::~Pt2Archive() = default;

llvm::Expected<Pt2Archive> Pt2Archive::open(int fd) {
  int own = ::dup(fd);
  if (own < 0)
    return stringError("cannot read: out of file descriptors");
  int code = 0;
  // zip_fdopen takes `own` and closes it with the archive (or on failure).
  zip_t *z = zip_fdopen(own, ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (!z)
    return stringError(fmt::format("is not a readable zip archive (truncated or corrupt .pt2?): {}", zipMessage(code)));
  auto h = std::make_unique<Handle>();
  h->zip = z;
  zip_int64_t n = zip_get_num_entries(z, 0);
  if (n < 0 || n > kMaxEntries)
    return stringError(fmt::format("zip archive with {} entries: more than the limit of {}", n, kMaxEntries));
  std::vector<std::string> names;
  names.reserve(static_cast<size_t>(n));
  for (zip_int64_t i = 0; i < n; ++i) {
    const char *name = zip_get_name(z, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
    names.emplace_back(name ? name : "");
  }
  return Pt2Archive(std::move(h), std::move(names));
}

llvm::Expected<std::string> Pt2Archive::read(llvm::StringRef name, uint64_t cap) const {
  zip_int64_t idx = zip_name_locate(h_->zip, name.str().c_str(), ZIP_FL_ENC_RAW);
  if (idx < 0)
    return stringError(fmt::format("{}: no such entry in the archive", name.str()));
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(h_->zip, static_cast<zip_uint64_t>(idx), 0, &st) == 0 && (st.valid & ZIP_STAT_SIZE) &&
      st.size > cap)
    return stringError(fmt::format("{}: {} bytes uncompressed, more than the limit of {} MiB", name.str(), st.size, cap >> 20));
  zip_file_t *f = zip_fopen_index(h_->zip, static_cast<zip_uint64_t>(idx), 0);
  if (!f)
    return stringError(fmt::format("{}: cannot read: {}", name.str(), zip_strerror(h_->zip)));
  std::string out;
  char buf[64 * 1024];
  for (;;) {
    zip_int64_t got = zip_fread(f, buf, sizeof buf);
    if (got < 0) {
      std::string why = zip_file_strerror(f);
      zip_fclose(f);
      return stringError(fmt::format("{}: cannot read (truncated or corrupt archive): {}", name.str(), why));
    }
    if (got == 0)
      break;
    // The declared size may lie (a zip bomb): stop at the cap regardless.
    if (out.size() + static_cast<uint64_t>(got) > cap) {
      zip_fclose(f);
      return stringError(fmt::format("{}: more than {} MiB uncompressed", name.str(), cap >> 20));
    }
    out.append(buf, static_cast<size_t>(got));
  }
  if (zip_fclose(f) != 0)
    return stringError(fmt::format("{}: checksum mismatch (corrupt archive)", name.str()));
  return out;
}

bool looksLikeZip(llvm::StringRef head) { return head.startswith("PK\x03\x04") || head.startswith("PK\x05\x06"); }

// The archive layout torch.export.save writes: <name>/models/<model>.json beside
// <name>/data/weights/ (never read but for its config, to find tied weights).
llvm::Expected<std::unique_ptr<Model>> importPt2(int fd, const std::string &path, uint64_t fileSize,
                                                 const ImportOptions &opts) {
  llvm::Expected<Pt2Archive> archive = Pt2Archive::open(fd);
  if (!archive)
    return archive.takeError();
  // "<name>/models/model.json" (torch.export.save) or "models/model.json".
  std::string modelEntry, weightsEntry, namesEntry;
  bool pickled = false;
  for (const std::string &n : archive->names()) {
    llvm::StringRef e(n);
    llvm::StringRef dir = llvm::sys::path::parent_path(e, llvm::sys::path::Style::posix);
    bool inModels = dir == "models" || dir.endswith("/models");
    if (inModels && e.endswith(".json") && (modelEntry.empty() || e.endswith("/model.json")))
      modelEntry = n;
    if (e.endswith("data/weights/model_weights_config.json"))
      weightsEntry = n;
    if (e.endswith("extra/graphlint_symbols.json"))   // graphlint.save_pt2: the Dim names
      namesEntry = n;
    pickled |= e.endswith("data.pkl");
  }
  if (modelEntry.empty())
    return stringError(pickled ? "is a zip archive written by torch.save (pickled tensors or a module), not by "
                          "torch.export.save: export the model with torch.export.save or graphlint-export"
                        : "is a zip archive but not a torch.export archive (no models/*.json entry)");
  llvm::Expected<std::string> json = archive->read(modelEntry, kMaxJsonBytes);
  if (!json)
    return json.takeError();
  // The optional entries: an absent one reads as empty.
  auto optional = [&](const std::string &entry, uint64_t cap) -> llvm::Expected<std::string> {
    return entry.empty() ? std::string() : archive->read(entry, cap);
  };
  llvm::Expected<std::string> config = optional(weightsEntry, kMaxConfigBytes);
  if (!config)
    return config.takeError();
  llvm::Expected<std::string> names = optional(namesEntry, kMaxNamesBytes);
  if (!names)
    return names.takeError();
  auto m = importExportedProgram(*json, *config, path, modelEntry, opts, *names);
  if (m)
    (*m)->fileSize = fileSize;
  return m;
}

}  // namespace graphlint::pt2
