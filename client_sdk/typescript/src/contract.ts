/**
 * The contract this kit speaks: where the proto is and which of its generated types the
 * runner uses. The types come from `npm run generate` (src/generated/, never edited).
 */
import * as path from 'path';

export type { Action__Output as Action } from './generated/bullring/v2/Action';
export type { Answer } from './generated/bullring/v2/Answer';
export type { DecisionRequest__Output as DecisionRequest } from './generated/bullring/v2/DecisionRequest';
export type { MatchEnded__Output as MatchEnded } from './generated/bullring/v2/MatchEnded';
export type { MatchStarted__Output as MatchStarted } from './generated/bullring/v2/MatchStarted';
export type { NoThanksObservation__Output as NoThanksObservation } from './generated/bullring/v2/NoThanksObservation';
export type { PlayRequest } from './generated/bullring/v2/PlayRequest';
export type { PlayResponse__Output as PlayResponse } from './generated/bullring/v2/PlayResponse';
export type { PublicEvent__Output as PublicEvent } from './generated/bullring/v2/PublicEvent';
export type { SixNimmtObservation__Output as SixNimmtObservation } from './generated/bullring/v2/SixNimmtObservation';
export type { ProtoGrpcType } from './generated/referee';

/** The proto file, copied into dist/ by the build (loaded at run time by @grpc/proto-loader). */
export const PROTO_FILE = path.resolve(__dirname, 'proto', 'bullring', 'v2', 'referee.proto');

/** The proto package holding BotService. */
export const PACKAGE = 'v2';
