// SPDX-License-Identifier: BSD-3-Clause
#include "common/command_completion.h"

#include <vector>

#include "common/command_line.h"

namespace nvj::cli {
namespace {

// What completes a value of this name: a bash compgen argument list.
std::string value_completion(const std::string& value) {
  if (value.find('|') != std::string::npos) {
    std::string words = value;
    for (char& c : words)
      if (c == '|') c = ' ';
    return "-W '" + words + "'";
  }
  if (value == "DIR") return "-d";
  for (const char* file : {"FILE", "PATH", "IMAGE", "SOCKET", "CONTROL", "SERVER", "KERNEL"})
    if (value == file) return "-f";
  return {};
}

// A shell function name from a command path: "nvj journal top" -> nvj_journal_top.
std::string function_name(const std::string& path) {
  std::string f = "_";
  for (char c : path) f += (c == ' ' || c == '-') ? '_' : c;
  return f;
}

void emit(const Command& app, const std::string& path, const std::string& commands, std::string& cases) {
  std::string options, operand, subs;
  std::string values;
  for (const OptionInfo& o : app.options()) {
    if (o.operand) {
      const std::string& name = o.names.front();
      if (operand.empty()) operand = name == "COMMAND" ? "-W '" + commands + "'" : value_completion(name);
      continue;
    }
    for (const std::string& name : o.names) {
      options += (options.empty() ? "" : " ") + name;
      if (!o.value.empty())
        values += "      " + name + ") COMPREPLY=($(compgen " + value_completion(o.value) + " -- \"$cur\")); return 1 ;;\n";
    }
  }
  for (const Command& sub : app.subcommands()) {
    if (!subs.empty()) subs += ' ';
    subs += sub.name();
  }
  cases += "    '" + path + "')\n";
  cases += "      case \"$prev\" in\n" + values + "      esac\n";
  cases += "      opts='" + options + "' subs='" + subs + "' operand=\"" + operand + "\" ;;\n";
  for (const Command& sub : app.subcommands())
    emit(sub, path.empty() ? sub.name() : path + " " + sub.name(), commands, cases);
}

}  // namespace

std::string make_bash_completion(const std::string& program, const Command& app) {
  std::string cases, commands;
  for (const Command& sub : app.subcommands()) {
    if (!commands.empty()) commands += ' ';
    commands += sub.name();
  }
  emit(app, "", commands, cases);
  const std::string f = function_name(program);
  return "# bash completion for " + program + ", made by `" + program + " completion bash` from its declarations.\n" +
         f + "() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
         "  local path='' word i opts subs operand\n"
         "  # The command path: the leading words that name commands.\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    word=${COMP_WORDS[i]}\n"
         "    case \"$word\" in -*) break ;; esac\n"
         "    " + f + "_subs \"$path\"\n"
         "    case \" $subs \" in *\" $word \"*) path=${path:+$path }$word ;; *) break ;; esac\n"
         "  done\n"
         "  " + f + "_at \"$path\" || return\n"
         "  if [[ $cur == -* ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
         "  elif [ -n \"$subs\" ]; then\n"
         "    COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n"
         "  elif [ -n \"$operand\" ]; then\n"
         "    eval \"COMPREPLY=(\\$(compgen $operand -- \\\"\\$cur\\\"))\"\n"
         "  fi\n"
         "}\n" +
         f + "_subs() { local cur='' prev=''; " + f + "_at \"$1\"; }\n"
         "# Sets opts, subs and operand for a command path; completes an option's\n"
         "# value itself (and returns 1) when the word before is such an option.\n" +
         f + "_at() {\n"
         "  opts='' subs='' operand=''\n"
         "  case \"$1\" in\n" +
         cases + "  esac\n  return 0\n}\n"
         "complete -o filenames -F " + f + " " + program + "\n";
}

}  // namespace nvj::cli
