#!/bin/sh
# Prints a greeting for the name given as $1.
greet() {
  printf 'hello, %s\n' "$1"
}
