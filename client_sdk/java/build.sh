#!/bin/sh
# Generate the gRPC client from the contract and compile the kit: ./build.sh
# The contract is proto/ in this folder if there is one, else the repository's proto/.
set -eu
cd "$(dirname "$0")"
if [ -d proto ]; then contract=proto; elif [ -d ../../proto ]; then contract=../../proto; else
  echo "build.sh: no contract: copy the repository's proto/ folder into $(pwd)" >&2; exit 2
fi
rm -rf build && mkdir -p build/generated build/classes
protoc -I"$contract" --java_out=build/generated --grpc-java_out=@generated=omit:build/generated \
  --plugin=protoc-gen-grpc-java=/usr/bin/grpc_java_plugin $(find "$contract" -name '*.proto')
# The jars of Debian's libgrpc-java, libprotobuf-java, libnetty-java and libperfmark-java.
classpath=build/classes
for jar in grpc-api grpc-context grpc-core grpc-netty grpc-protobuf grpc-protobuf-lite grpc-stub \
    geronimo-annotation-1.3-spec protobuf guava perfmark-api netty-buffer netty-codec netty-codec-http netty-codec-http2 \
    netty-codec-socks netty-common netty-handler netty-handler-proxy netty-resolver netty-transport; do
  [ -f "/usr/share/java/$jar.jar" ] || { echo "build.sh: /usr/share/java/$jar.jar is missing" >&2; exit 2; }
  classpath="$classpath:/usr/share/java/$jar.jar"
done
echo "$classpath" > build/classpath
javac -nowarn -XDignore.symbol.file -encoding UTF-8 -d build/classes -cp "$classpath" \
  $(find build/generated src -name '*.java')
echo "built: ./run.sh --server HOST:PORT --token TOKEN --ladder six_nimmt"
