#!/bin/sh
echo '{"greeting":"hello"}'
