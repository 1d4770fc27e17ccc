{-# LANGUAGE BangPatterns #-}
-- ping_pong: a pinger (the main thread) and a ponger (forkIO) exchange messages/2 round trips
-- through two MVars (one per direction, each a one-slot channel); each side checks that the
-- sequence numbers arrive in order. As our kernel, in two phases: the throughput phase
-- (elapsed_ns) has no clock read inside; then the latency phase times latency_samples more round
-- trips one by one for the percentiles.
module PingPong (pingPong) where

import Control.Concurrent (forkIO)
import Control.Concurrent.MVar (MVar, newEmptyMVar, putMVar, takeMVar)
import Control.Monad (when)
import Data.Array.IO (IOUArray, getElems, newArray_, writeArray)
import qualified Data.IntMap.Strict as IntMap
import Data.Word (Word64)
import GHC.Clock (getMonotonicTimeNSec)

import Protocol

-- What one side received: its count and how many arrived out of order.
data Tally = Tally {-# UNPACK #-} !Int {-# UNPACK #-} !Int

-- The ponger answers each ping with a pong of the same seq: the first roundTrips pings are the
-- throughput phase's, the next probes the latency phase's; it puts each phase's tally in done.
ponger :: Int -> Int -> MVar Int -> MVar Int -> MVar (Tally, Tally) -> IO ()
ponger roundTrips probes ping pong done = phase 0 roundTrips 0 0 >>= \main' -> do
  probed <- phase roundTrips probes 0 0
  putMVar done (main', probed)
  where
    phase !first !count !received !outOfOrder
      | received == count = return (Tally received outOfOrder)
      | otherwise = do
          seq' <- takeMVar ping
          putMVar pong seq'
          phase first count (received + 1) (if seq' /= first + received then outOfOrder + 1 else outOfOrder)

-- What one clock read costs here: each timed round trip includes about one.
clockReadNs :: IO Double
clockReadNs = do
  let reads' = 1000 :: Int
      loop :: Int -> Word64 -> IO Word64
      loop 0 !lastRead = return lastRead
      loop n _ = getMonotonicTimeNSec >>= loop (n - 1)
  first <- getMonotonicTimeNSec
  lastRead <- loop reads' first
  return (fromIntegral (lastRead - first) / fromIntegral reads')

-- sorted[min(floor(p*(n-1)+0.5), n-1)] of the samples counted in `histogram` (n > 0).
percentile :: IntMap.IntMap Int -> Int -> Double -> Double
percentile histogram n p = walk (IntMap.toAscList histogram) 0
  where
    rank = min (n - 1) (floor (p * fromIntegral (n - 1) + 0.5 :: Double))
    walk ((v, c) : rest) !seen
      | seen + c > rank = fromIntegral v
      | otherwise = walk rest (seen + c)
    walk [] _ = 0

describe :: Int -> Int -> Int -> String
describe pings pongs outOfOrder =
  "pings=" ++ show pings ++ " pongs=" ++ show pongs ++ " out_of_order=" ++ show outOfOrder ++ " corrupt=0"

pingPong :: Int -> Int -> Maybe String -> IO Reply
pingPong messages' probes fault = do
  let roundTrips = messages' `div` 2
  ping <- newEmptyMVar
  pong <- newEmptyMVar
  done <- newEmptyMVar
  _ <- forkIO (ponger roundTrips probes ping pong done)
  let exchange :: Int -> Int -> Int -> Int -> IO Tally
      exchange !first !count !received !outOfOrder
        | received == count = return (Tally received outOfOrder)
        | otherwise = do
            putMVar ping $! first + received
            seq' <- takeMVar pong
            exchange first count (received + 1) (if seq' /= first + received then outOfOrder + 1 else outOfOrder)
  -- The throughput phase: no clock read inside.
  start <- getMonotonicTimeNSec
  Tally pongs outOfOrder <- exchange 0 roundTrips 0 0
  end <- getMonotonicTimeNSec
  let elapsed = max 1 (fromIntegral (end - start)) :: Int

  -- The latency phase: each round trip timed on its own, kept unboxed until the phase is over.
  clockRead <- if probes > 0 then clockReadNs else return 0
  samples <- newArray_ (0, max 0 (probes - 1)) :: IO (IOUArray Int Int)
  let probe :: Int -> Int -> IO Int
      probe !k !probesOutOfOrder
        | k == probes = return probesOutOfOrder
        | otherwise = do
            sent <- getMonotonicTimeNSec
            putMVar ping $! roundTrips + k
            seq' <- takeMVar pong
            back <- getMonotonicTimeNSec
            writeArray samples k (fromIntegral (back - sent))
            probe (k + 1) (if seq' /= roundTrips + k then probesOutOfOrder + 1 else probesOutOfOrder)
  probesOutOfOrder <- probe 0 0
  (Tally pings pingsOutOfOrder, Tally probed probedOutOfOrder) <- takeMVar done

  -- A lost or reordered probe is a wrong answer too.
  when (probed /= probes || probesOutOfOrder + probedOutOfOrder /= 0) $
    wrongAnswer "ping_pong" ("latency phase: " ++ describe probed probes (probesOutOfOrder + probedOutOfOrder))
                ("latency phase: " ++ describe probes probes 0)
  -- Tests only: one message counted out of order, which the check below must refuse.
  let outOfOrder' = outOfOrder + pingsOutOfOrder + (if fault == Just "wrong_answer" then 1 else 0)
      got = describe pings pongs outOfOrder'
      expected = describe roundTrips roundTrips 0
  when (got /= expected) $ wrongAnswer "ping_pong" got expected

  histogram <- if probes > 0
    then IntMap.fromListWith (+) . map (\v -> (v, 1)) <$> getElems samples
    else return IntMap.empty
  -- A figure that was not measured is left out, never 0: the percentiles and the clock's cost
  -- need probes.
  let latency
        | probes > 0 =
            [ ("round_trip_p50_ns", percentile histogram probes 0.50)
            , ("round_trip_p99_ns", percentile histogram probes 0.99)
            , ("round_trip_max_ns", percentile histogram probes 1.0)
            ]
        | otherwise = []
      clock = [("clock_read_ns", clockRead) | probes > 0]
  return Reply
    { elapsedNs = elapsed
    , messages = pings + pongs
    , answer = got
    , metrics = [("round_trip_mean_ns", fromIntegral elapsed / fromIntegral roundTrips)] ++ latency
        ++ [("round_trip_samples", fromIntegral probes)] ++ clock
    , agentsCreated = Nothing
    }
