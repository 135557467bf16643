// table_printer.h: kubectl-style aligned text tables (upper-case headers, columns padded to the
// widest cell and separated by three spaces, the last column unpadded). Shared by every ctl
// subcommand with a table output.
//
// Thread-safety: a TablePrinter is used by one thread.
#ifndef PORTICO_CONTROLLER_CTL_TABLE_PRINTER_H_
#define PORTICO_CONTROLLER_CTL_TABLE_PRINTER_H_

#include <ostream>
#include <string>
#include <vector>

namespace portico::ctl {

// TablePrinter collects rows and prints them aligned.
class TablePrinter {
 public:
  explicit TablePrinter(std::vector<std::string> headers) : headers_(std::move(headers)) {}

  // AddRow appends a row; missing cells print as empty, extra cells are dropped.
  void AddRow(std::vector<std::string> cells);
  void Print(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_TABLE_PRINTER_H_
