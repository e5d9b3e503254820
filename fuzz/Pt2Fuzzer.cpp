// Target 6: bytes as a torch.export .pt2 archive -> the zip reader (entry
// table, deflate, size and path checks) -> the ExportedProgram importer
// (models/model.json, the weights config, extra/graphlint_symbols.json) ->
// all rules and analyses. The archive is read through a memfd, as the CLI
// reads a file: importPt2 takes a descriptor.
#include "FuzzTargets.h"

#include "graphlint/pt2/Pt2Importer.h"

#include <sys/mman.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace graphlint;
  int fd = memfd_create("graphlint-fuzz.pt2", MFD_CLOEXEC);
  if (fd < 0)
    return 0;
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0)
      break;
    done += static_cast<size_t>(n);
  }
  if (done == size) {
    auto model = pt2::importPt2(fd, "/nonexistent-graphlint-fuzz/model.pt2", size, ImportOptions());
    if (model)
      fuzz::lintAndRender(**model);
    else
      llvm::consumeError(model.takeError());
  }
  ::close(fd);
  return 0;
}
